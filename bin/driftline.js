#!/usr/bin/env node
// The `driftline` command. The project runs TypeScript through tsx, so register it, then load
// the real entry point.
import { register } from 'tsx/esm/api';

register();
await import('./cli.ts');
