// The sandbox from a checkout and toolchain under a private folder (mode 700, as `mktemp -d` and
// /root are), with the real bubblewrap: bwrap resolves its binds with the worker's rights before
// the REPL drops to its uid, so the REPL starts and answers; the control shows that dropping
// first (what the sandbox did before) cannot even bind them. A bound path the REPL's own uid
// cannot read, a missing binary and a refused namespace are refused with that cause named.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createLeanRunner, DEFAULT_SANDBOX } from '../../engines/lean/create-runner';
import type { LeanRunner } from '../../engines/lean/runner-contract';
import { explainSandboxFailure, sandboxCommand, SandboxUnavailableError, shellQuote } from '../../engines/lean/sandbox';

const ROOT = process.getuid?.() === 0;
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

const dirs: string[] = [];
const runners: LeanRunner[] = [];
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A `mktemp -d` folder (mode 700) holding a toolchain, an elan home and a project, as /root would. */
function privateFolder() {
  const top = mkdtempSync(join(tmpdir(), 'private-'));
  dirs.push(top);
  chmodSync(top, 0o700);
  const toolchain = join(top, 'toolchain');
  const elan = join(top, '.elan');
  const project = join(top, 'project');
  for (const d of [toolchain, join(toolchain, 'bin'), elan, project]) mkdirSync(d, { mode: 0o755 });
  writeFileSync(join(toolchain, 'marker'), 'toolchain here\n', { mode: 0o644 });
  writeFileSync(join(elan, 'settings.toml'), 'default_toolchain = "test"\n', { mode: 0o644 });
  const probe = join(toolchain, 'bin', 'probe');
  writeFileSync(
    probe,
    [
      '#!/bin/sh',
      'echo "uid=$(id -u)"',
      `cat ${shellQuote(join(toolchain, 'marker'))}`,
      'cat "$ELAN_HOME/settings.toml"',
      `if ( echo x > ${shellQuote(join(toolchain, 'written'))} ) 2>/dev/null; then echo wrote-toolchain; else echo toolchain-read-only; fi`,
      'if ( echo x > /tmp/scratch ) 2>/dev/null; then echo wrote-scratch; fi',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return { top, toolchain, elan, project, probe };
}

const env = (elan: string) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', ELAN_HOME: elan });

describe('a toolchain and checkout under a mode-700 folder', () => {
  it('is bound and readable by the REPL, which runs as its own uid (the control: dropping the uid first cannot bind it)', () => {
    const f = privateFolder();
    const plan = sandboxCommand(f.probe, { ...DEFAULT_SANDBOX, cwd: f.project, readOnly: [f.toolchain] }, env(f.elan));
    const run = spawnSync('sh', ['-c', plan.command], { encoding: 'utf8', env: plan.env, timeout: 30_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout.split('\n')).toEqual([
      `uid=${ROOT ? 65534 : process.getuid!()}`,
      'toolchain here',
      'default_toolchain = "test"',
      'toolchain-read-only',
      'wrote-scratch',
      '',
    ]);
    if (ROOT) {
      expect(plan.applied).toContain('runs as uid 65534:65534 (dropped inside the container, after its mounts)');
      // The control: bwrap started as uid 65534 resolves the binds as that uid, and the mode-700 folder stops it.
      const before = spawnSync(
        'setpriv',
        [
          '--reuid=65534',
          '--regid=65534',
          '--clear-groups',
          '--',
          'bwrap',
          '--unshare-all',
          '--ro-bind',
          '/',
          '/',
          '--ro-bind',
          f.toolchain,
          '/mnt',
          'true',
        ],
        { encoding: 'utf8' },
      );
      expect(before.status).not.toBe(0);
      expect(before.stderr).toMatch(/Can't find source path .*: Permission denied/);
    }
  });

  it('runs the REPL (the fake, speaking the REPL protocol) from there: it answers the header import', async () => {
    const f = privateFolder();
    // The fake REPL's source as the "toolchain", its script and log in a folder beside it.
    for (const file of ['fake-repl.ts', 'fake-repl-rules.ts']) copyFileSync(join(REPO_ROOT, 'test/fakes', file), join(f.toolchain, file));
    writeFileSync(join(f.toolchain, 'package.json'), '{ "type": "module" }\n'); // as the repository's own
    const state = join(f.top, 'state');
    mkdirSync(state);
    chmodSync(state, 0o777); // the REPL's uid writes its log here
    writeFileSync(join(state, 'script.json'), JSON.stringify({ stateDir: state, leakDir: state }));
    const log = join(state, 'events.log');
    const command = [
      process.execPath,
      '--import',
      TSX_LOADER,
      join(f.toolchain, 'fake-repl.ts'),
      '--script',
      join(state, 'script.json'),
      '--log',
      log,
    ]
      .map(shellQuote)
      .join(' ');
    const runner = createLeanRunner({
      replCmd: command,
      header: 'import Mathlib',
      timeoutMs: 20_000,
      cwd: f.project,
      sandbox: { readOnly: [REPO_ROOT, f.toolchain], writable: [state], maxAddressSpaceMb: 65_536 },
    });
    runners.push(runner);
    await runner.warm!();
    const probes = readFileSync(`${log}.probes`, 'utf8');
    expect(probes).toMatch(new RegExp(`limits pid=\\d+ sandboxed=true .*uid=${ROOT ? 65534 : process.getuid!()} capeff=0000000000000000`));
    expect(readFileSync(log, 'utf8')).toMatch(/^header /m);
  });

  it('refuses, naming the path and its mode, when the REPL uid cannot read a bound folder itself', () => {
    if (!ROOT) return; // only a root worker's REPL has another uid than the files' owner
    const f = privateFolder();
    chmodSync(f.toolchain, 0o700);
    expect(() => sandboxCommand(f.probe, { ...DEFAULT_SANDBOX, readOnly: [f.toolchain] }, env(f.elan))).toThrow(
      new RegExp(`the REPL's user \\(uid 65534\\) cannot read ${f.toolchain} \\(mode 700, owner uid 0\\)`),
    );
  });

  it('refuses a missing bubblewrap, naming the binary and the package', () => {
    const f = privateFolder();
    let message = '';
    try {
      sandboxCommand(f.probe, { ...DEFAULT_SANDBOX, bwrap: '/nonexistent/bwrap', readOnly: [f.toolchain] }, env(f.elan));
    } catch (err) {
      expect(err).toBeInstanceOf(SandboxUnavailableError);
      message = (err as Error).message;
    }
    expect(message).toMatch(/`\/nonexistent\/bwrap` is not installed or not on PATH \(Debian: apt-get install bubblewrap\)/);
    expect(message.match(/is not installed/g)).toHaveLength(1); // said once, however many ways were tried
  });
});

describe('the causes a failed probe is put in words', () => {
  // bubblewrap's own messages (bubblewrap 0.8, Debian), as the probe captures them.
  it.each([
    ['spawnSync bwrap ENOENT', /`bwrap` is not installed/],
    ['exit 127: prlimit: failed to execute bwrap: No such file or directory', /`bwrap` is not installed/],
    ['exit 1: bwrap: execvp setpriv: No such file or directory', /`setpriv` is not installed .*util-linux/],
    ["exit 1: bwrap: Can't find source path /nope/x: No such file or directory", /\/nope\/x does not exist/],
    [
      'exit 1: bwrap: setting up uid map: Permission denied',
      /refuses bubblewrap a new namespace for uid 1000 .*unprivileged user namespaces are off/,
    ],
    [
      'exit 1: bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.',
      /refuses bubblewrap a new namespace/,
    ],
    ['exit 1: bwrap: Creating new namespace failed: Operation not permitted', /refuses bubblewrap a new namespace/],
    ['exit 126: setpriv: failed to execute sh: Resource temporarily unavailable', /process limit .* is already reached/],
  ])('%s', (failure, expected) => {
    expect(explainSandboxFailure(failure, { bwrap: 'bwrap', runsAs: 1000 })).toMatch(expected);
  });

  it('names the closed folder above a path bwrap could not reach', () => {
    const f = privateFolder();
    const said = explainSandboxFailure(`exit 1: bwrap: Can't find source path ${f.toolchain}: Permission denied`, {
      bwrap: 'bwrap',
      runsAs: 65534,
    });
    expect(said).toContain(
      `uid 65534, as which bubblewrap runs, cannot reach ${f.toolchain}: ${f.top} (mode 700, owner uid ${process.getuid!()}) is closed to it`,
    );
  });
});
