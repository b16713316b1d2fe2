/-
  keywords: writes the words that can start a syntax of one category in the environment of the
  given modules, as one JSON array of strings, for driftline's screen.

  - `--category command` (the default): the words that start a command. The screen
    (engines/lean/statement-safety.ts, via LEAN_COMMAND_KEYWORDS) refuses these wherever they
    appear outside their place, because after a parse error Lean resumes at the next such token
    and runs the command.
  - `--category tactic`: the words that start a tactic. The screen admits in a statement's `by`
    blocks only the tactics of engines/lean/tactic-names.ts; comparing that list with this dump
    (docs/lean.md, "Keeping the lists current") shows names renamed or removed upstream and new
    tactics to read before listing.
  - `--category term`: the words that start a term, to find term elaborators that evaluate
    (`include_str`-like) for the screen's ESCAPE_HATCHES.

  Usage (inside the Lake project, so the libraries are on the search path):
    lake exe keywords [--category command|tactic|term] Module... > keywords.json
  e.g. lake exe keywords Mathlib ConNF > keywords.json
       lake exe keywords --category tactic Mathlib > tactics.json

  The words are the first tokens of the parsers of the category (their keys in its leading
  table), which covers every library's own syntax (`#leansearch`, `simproc`, `positivity`, …)
  without a list kept by hand.
-/
import Lean
open Lean Parser

/-- A JSON string literal. -/
def jsonString (s : String) : String := (Json.str s).compress

def usage : String := "usage: lake exe keywords [--category command|tactic|term] Module... > keywords.json"

def main (args : List String) : IO UInt32 := do
  let (category, modules) := match args with
    | "--category" :: c :: rest => (c, rest)
    | rest => ("command", rest)
  if modules.isEmpty || !(["command", "tactic", "term"].contains category) then
    IO.eprintln usage
    return 2
  initSearchPath (← findSysroot)
  let env ← importModules (modules.toArray.map fun m => { module := m.toName }) {} (trustLevel := 1024)
  let some cat := (parserExtension.getState env).categories.find? category.toName
    | IO.eprintln s!"keywords: the environment has no `{category}` category"; return 1
  let mut words : Array String := #[]
  for (key, _) in cat.tables.leadingTable.toList do
    -- Keys of token-led parsers are the token itself; identifier-led ones use `ident` kinds.
    let word := key.toString (escape := false)
    if !word.isEmpty && !(word.startsWith "Lean.Parser") && word != "ident" then
      words := words.push word
  let sorted := words.qsort (· < ·)
  IO.println ("[" ++ ", ".intercalate (sorted.toList.map jsonString) ++ "]")
  return 0
