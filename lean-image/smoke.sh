#!/bin/sh
# Smoke test of a built image: the REPL imports Mathlib and checks one statement, a forbidden
# command never reaches it, and the REPL has no network. Usage: ./smoke.sh driftline-lean:TAG
set -eu
IMAGE="$1"
run() { docker run --rm --read-only --tmpfs /scratch --network none --entrypoint sh "$IMAGE" -c "$1"; }

echo "1. the REPL checks a statement against Mathlib"
run 'cd /opt/lean && printf "%s\n\n%s\n\n" "{\"cmd\": \"import Mathlib\"}" "{\"cmd\": \"theorem t (p : ℕ) (hp : p.Prime) : 2 ≤ p := by sorry\", \"env\": 0}" | lake env /opt/repl/.lake/build/bin/repl' \
  | tee /dev/stderr | grep -q "declaration uses 'sorry'"

echo "2. driftline's own checks pass through the pool (compile + safety) inside the image"
run 'cd /app && node --import tsx -e "
  const { createLeanRunner } = await import(\"./engines/lean/lean-runner.ts\");
  const { compileStatement } = await import(\"./engines/lean/compile.ts\");
  const r = createLeanRunner({ replCmd: process.env.LEAN_REPL_CMD, cwd: process.env.LEAN_REPL_CWD, header: \"import Mathlib\", timeoutMs: 120000, size: 1, sandbox: { noNetwork: true } });
  const ok = await compileStatement(r, \"theorem t (p : ℕ) (hp : p.Prime) : 2 ≤ p := by sorry\");
  const bad = await compileStatement(r, \"#eval IO.println 1\\ntheorem t : True := by sorry\");
  await r.close();
  if (ok.status !== \"ok\" || bad.status !== \"error\") { console.error(ok, bad); process.exit(1); }
  console.log(\"ok\");"'

echo "3. the extraction program writes corpus lines"
run 'cd /opt/lean && lake exe extract --prefix Mathlib.Data.Nat.Prime.Defs --src .lake/packages/mathlib Mathlib.Data.Nat.Prime.Defs | head -3' \
  | tee /dev/stderr | grep -q '"name":"Nat.Prime"'
echo "smoke test passed"
