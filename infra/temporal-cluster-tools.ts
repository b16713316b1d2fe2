// The Temporal server, its schema tool and the Temporal UI server, built from their Go modules
// (the Go module proxy is the only source) into .tools/temporal-server/v<version>/, keyed by
// version: a second build of the same version is skipped, and the Go build cache makes a build
// after a version change short. The SQL schemas shipped in the server's module are copied
// beside the binaries, so running a cluster needs neither Go nor the module cache.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { TOOLS_DIR } from './temporal-cli';

export const TEMPORAL_SERVER_VERSION = '1.32.2';
export const TEMPORAL_UI_SERVER_VERSION = '2.58.1';
/** The Go the server's go.mod asks for; fetched by `go` itself (GOTOOLCHAIN) from the proxy. */
const GO_TOOLCHAIN = 'go1.27.3';
/** Versions of the UI server's dependencies that the module proxy serves (two it asks for, echo
 * v4.16.1 and go.temporal.io/api v1.64.0, are refused): a small module of our own requires them,
 * and minimal version selection picks them. */
const UI_SERVER_DEPENDENCIES = ['github.com/labstack/echo/v4 v4.16.4', 'go.temporal.io/api v1.64.3'];

export interface ClusterTools {
  /** temporal-server: `--config-file F start --service S` */
  server: string;
  /** temporal-sql-tool */
  sqlTool: string;
  /** The server module's schema/postgresql/v12 (temporal/ and visibility/, each with versioned/). */
  schemaDir: string;
  /** The Temporal UI server. */
  uiServer: string;
}

export function clusterToolsDir(version = TEMPORAL_SERVER_VERSION): string {
  return join(TOOLS_DIR, 'temporal-server', `v${version}`);
}

function toolsIn(dir: string): ClusterTools {
  return {
    server: join(dir, 'temporal-server'),
    sqlTool: join(dir, 'temporal-sql-tool'),
    schemaDir: join(dir, 'schema', 'postgresql', 'v12'),
    uiServer: join(dir, `temporal-ui-server-v${TEMPORAL_UI_SERVER_VERSION}`),
  };
}

/** The built tools, or undefined when any is missing (TEMPORAL_SERVER_TOOLS_DIR overrides the folder). */
export function findClusterTools(): ClusterTools | undefined {
  const tools = toolsIn(process.env.TEMPORAL_SERVER_TOOLS_DIR || clusterToolsDir());
  return Object.values(tools).every((p) => existsSync(p)) ? tools : undefined;
}

export function requireClusterTools(): ClusterTools {
  const found = findClusterTools();
  if (found) return found;
  throw new Error(
    `The Temporal server is not built (looked in ${process.env.TEMPORAL_SERVER_TOOLS_DIR || clusterToolsDir()}). Run \`npm run cluster -- build\` (needs Go; about 5 minutes the first time).`,
  );
}

function findGo(): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), '/usr/local/go/bin']) {
    if (dir && existsSync(join(dir, 'go'))) return join(dir, 'go');
  }
  return undefined;
}

/** Builds whatever is missing; returns the tools. Throws with the Go output's tail on failure. */
export function ensureClusterTools(log: (line: string) => void = console.log): ClusterTools {
  const existing = findClusterTools();
  if (existing) return existing;
  const go = findGo();
  if (!go)
    throw new Error('Building the Temporal server needs Go (https://go.dev/dl/, or Debian’s golang-go package), which was not found.');
  const dir = clusterToolsDir();
  const tools = toolsIn(dir);
  mkdirSync(dir, { recursive: true });
  const env = { ...process.env, GOTOOLCHAIN: process.env.GOTOOLCHAIN || GO_TOOLCHAIN };
  const goRun = (args: string[], opts: { gobin?: string; cwd?: string } = {}) => {
    const result = spawnSync(go, args, {
      env: opts.gobin ? { ...env, GOBIN: opts.gobin } : env,
      cwd: opts.cwd ?? dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (result.status !== 0) {
      const tail = `${result.stdout}${result.stderr}`.trim().split('\n').slice(-15).join('\n');
      throw new Error(`\`go ${args.join(' ')}\` failed (exit ${result.status}):\n${tail}`);
    }
    return result.stdout;
  };
  if (!existsSync(tools.server) || !existsSync(tools.sqlTool)) {
    log(`Building the Temporal server and its schema tool v${TEMPORAL_SERVER_VERSION} (Go module go.temporal.io/server) into ${dir} …`);
    const gobin = join(dir, 'build');
    goRun(
      [
        'install',
        `go.temporal.io/server/cmd/server@v${TEMPORAL_SERVER_VERSION}`,
        `go.temporal.io/server/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
      ],
      { gobin },
    );
    renameSync(join(gobin, 'server'), tools.server);
    renameSync(join(gobin, 'sql'), tools.sqlTool);
    rmSync(gobin, { recursive: true, force: true });
  }
  if (!existsSync(tools.schemaDir)) {
    // The schemas are not in the binaries: take them from the module just downloaded.
    const info = JSON.parse(goRun(['mod', 'download', '-json', `go.temporal.io/server@v${TEMPORAL_SERVER_VERSION}`])) as { Dir: string };
    cpSync(join(info.Dir, 'schema', 'postgresql', 'v12'), tools.schemaDir, { recursive: true });
  }
  if (!existsSync(tools.uiServer)) {
    log(`Building the Temporal UI server v${TEMPORAL_UI_SERVER_VERSION} (Go module github.com/temporalio/ui-server/v2) …`);
    const moduleDir = join(dir, 'build-ui');
    mkdirSync(moduleDir, { recursive: true });
    const goMod = [
      'module driftline.local/temporal-ui',
      '',
      'go 1.25',
      '',
      'require (',
      `\tgithub.com/temporalio/ui-server/v2 v${TEMPORAL_UI_SERVER_VERSION}`,
      ...UI_SERVER_DEPENDENCIES.map((d) => `\t${d}`),
      ')',
      '',
    ];
    writeFileSync(join(moduleDir, 'go.mod'), goMod.join('\n'));
    const main = 'github.com/temporalio/ui-server/v2/cmd/server';
    goRun(['get', `${main}@v${TEMPORAL_UI_SERVER_VERSION}`], { cwd: moduleDir });
    goRun(['build', '-o', tools.uiServer, main], { cwd: moduleDir });
    rmSync(moduleDir, { recursive: true, force: true });
  }
  return tools;
}
