// Commander suggests a similar option after "unknown option" only within an edit distance of a
// few letters, so a shortened flag (`--repair` for `--repair-rounds`, `--gold` for
// `--gold-statement`) got no suggestion. This Command, used for every command of the CLI, names
// the options that begin with what was typed, and leaves everything else to commander.
import { Command } from 'commander';

/** The long options of `command` (and the parents whose options it accepts) that begin with `flag-`. */
function extensionsOf(command: Command, flag: string): string[] {
  const out: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) {
    for (const option of c.options) if (!option.hidden && option.long?.startsWith(`${flag}-`)) out.push(option.long);
    if ((c as unknown as { _enablePositionalOptions?: boolean })._enablePositionalOptions) break;
  }
  return out;
}

export class SuggestingCommand extends Command {
  override createCommand(name?: string): Command {
    return new SuggestingCommand(name);
  }

  /** Commander's own hook for an unknown option (lib/command.js). */
  unknownOption(flag: string): void {
    const candidates = flag.startsWith('--') ? extensionsOf(this, flag) : [];
    if (candidates.length === 0) {
      (Command.prototype as unknown as { unknownOption: (this: Command, flag: string) => void }).unknownOption.call(this, flag);
      return;
    }
    const list = candidates.length === 1 ? candidates[0] : `${candidates.slice(0, -1).join(', ')} or ${candidates.at(-1)}`;
    this.error(`error: unknown option '${flag}'\n(Did you mean ${list}?)`, { code: 'commander.unknownOption' });
  }
}
