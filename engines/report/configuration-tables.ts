// The report's "Configurations" section as tables a person reads: the settings in which the
// configurations differ (one column per configuration), then the settings they all share. Nested
// settings are flattened to dotted names (`models.judge`), lists joined, so no JSON is shown.
import type { Table } from './tables';

/** A configuration's settings as (dotted name, value in words), in the order they appear. */
export function flattenSettings(value: unknown, prefix = '', out: [string, string][] = []): [string, string][] {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0 && prefix) out.push([prefix, '(none)']);
    for (const [key, v] of entries) flattenSettings(v, prefix ? `${prefix}.${key}` : key, out);
    return out;
  }
  if (prefix) out.push([prefix, settingText(value)]);
  return out;
}

function settingText(value: unknown): string {
  if (value === undefined || value === null) return '–';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (Array.isArray(value))
    return value.length === 0 ? '(none)' : value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ');
  return String(value);
}

/** The differing settings (setting × configuration) and the shared ones (setting, value); either
 * is null when it has no rows. Configurations in `order` first (the report's order), then any
 * others the sweep named. */
export function configurationTables(
  configurations: Readonly<Record<string, unknown>>,
  order: readonly string[] = [],
): { differ: Table | null; shared: Table | null } {
  const names = [...order.filter((n) => n in configurations), ...Object.keys(configurations).filter((n) => !order.includes(n))];
  const settings = new Map<string, Map<string, string>>();
  for (const name of names) {
    for (const [key, text] of flattenSettings(configurations[name])) {
      let row = settings.get(key);
      if (!row) settings.set(key, (row = new Map()));
      row.set(name, text);
    }
  }
  const differ: string[][] = [];
  const shared: string[][] = [];
  for (const [key, row] of settings) {
    const values = names.map((n) => row.get(n) ?? '–');
    if (names.length > 1 && new Set(values).size > 1) differ.push([key, ...values]);
    else shared.push([key, values[0]!]);
  }
  return {
    differ:
      differ.length > 0
        ? {
            id: 'configurations-differ',
            title: names.length > 1 ? 'Where the configurations differ' : 'Settings',
            caption: "Each configuration's settings as the sweep recorded them; '–' where a configuration has no such setting.",
            header: ['setting', ...names],
            rows: differ,
          }
        : null,
    shared:
      shared.length > 0
        ? {
            id: 'configurations-shared',
            title: names.length > 1 ? 'Settings every configuration shares' : 'Settings',
            header: ['setting', 'value'],
            rows: shared,
          }
        : null,
  };
}
