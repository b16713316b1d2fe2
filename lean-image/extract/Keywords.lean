/-
  keywords: writes the words that can start a command in the environment of the given modules,
  as one JSON array of strings, for driftline's screen (engines/lean/statement-safety.ts via
  LEAN_COMMAND_KEYWORDS). The screen refuses these wherever they appear outside their place,
  because after a parse error Lean resumes at the next such token and runs the command.

  Usage (inside the Lake project, so the libraries are on the search path):
    lake exe keywords Module... > keywords.json
  e.g. lake exe keywords Mathlib ConNF > keywords.json

  The words are the first tokens of the parsers of the `command` syntax category (their keys
  in its leading table), which covers every library's own commands (`#leansearch`, `simproc`,
  `irreducible_def`, …) without a list kept by hand.
-/
import Lean
open Lean Parser

/-- A JSON string literal. -/
def jsonString (s : String) : String := (Json.str s).compress

def main (args : List String) : IO UInt32 := do
  if args.isEmpty then
    IO.eprintln "usage: lake exe keywords Module... > keywords.json"
    return 2
  initSearchPath (← findSysroot)
  let env ← importModules (args.toArray.map fun m => { module := m.toName }) {} (trustLevel := 1024)
  let some command := (parserExtension.getState env).categories.find? `command
    | IO.eprintln "keywords: the environment has no `command` category"; return 1
  let mut words : Array String := #[]
  for (key, _) in command.tables.leadingTable.toList do
    -- Keys of token-led parsers are the token itself; identifier-led ones use `ident` kinds.
    let word := key.toString (escape := false)
    if !word.isEmpty && !(word.startsWith "Lean.Parser") && word != "ident" then
      words := words.push word
  let sorted := words.qsort (· < ·)
  IO.println ("[" ++ ", ".intercalate (sorted.toList.map jsonString) ++ "]")
  return 0
