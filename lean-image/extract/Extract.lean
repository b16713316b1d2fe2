/-
  extract: writes every declaration of the imported libraries as one JSON object per line, in
  driftline's corpus schema (activities/retrieval/corpus.ts, CorpusLineSchema):

    {"name", "kind", "signature", "docstring"?, "module", "source"?, "uses": [..]}

  Usage (inside the Lake project, so the libraries are on the search path):
    lake exe extract [--prefix Mathlib]... [--src DIR]... Module... > corpus.jsonl
  e.g. lake exe extract --prefix Mathlib --src .lake/packages/mathlib Mathlib > mathlib.jsonl

  `--prefix` keeps declarations whose module starts with it (default: all modules).
  `--src` roots are searched for `<Module/Path>.lean` to cut the declaration's source text.
-/
import Lean
open Lean Meta

structure Args where
  modules : Array Name := #[]
  prefixes : Array Name := #[]
  srcRoots : Array System.FilePath := #[]

partial def parseArgs : List String → Args → Args
  | "--prefix" :: p :: rest, a => parseArgs rest { a with prefixes := a.prefixes.push p.toName }
  | "--src" :: d :: rest, a => parseArgs rest { a with srcRoots := a.srcRoots.push d }
  | m :: rest, a => parseArgs rest { a with modules := a.modules.push m.toName }
  | [], a => a

/-- The kind as the corpus spells it. -/
def kindOf (env : Environment) (c : ConstantInfo) : String :=
  match c with
  | .thmInfo _ => "theorem"
  | .axiomInfo _ => "axiom"
  | .opaqueInfo _ => "opaque"
  | .quotInfo _ => "quot"
  | .ctorInfo _ => "constructor"
  | .recInfo _ => "recursor"
  | .inductInfo _ =>
    if isClass env c.name then "class"
    else if isStructure env c.name then "structure"
    else "inductive"
  | .defnInfo d =>
    if Meta.isInstanceCore env c.name then "instance"
    else if d.hints.isAbbrev then "abbrev"
    else "def"

/-- Compiler and elaborator by-products nobody writes by hand. -/
def skip (env : Environment) (n : Name) : Bool :=
  n.isInternal || isPrivateName n || isAuxRecursor env n || isNoConfusion env n ||
    isRecCore env n || Meta.isMatcherCore env n

def moduleOf (env : Environment) (n : Name) : Option Name :=
  env.getModuleIdxFor? n |>.bind fun i => env.header.moduleNames[i.toNat]?

def wanted (prefixes : Array Name) (m : Name) : Bool :=
  prefixes.isEmpty || prefixes.any (·.isPrefixOf m)

/-- Lines `[from, to]` (1-based) of the module's source file, if a root has it. -/
def sourceText (roots : Array System.FilePath) (cache : IO.Ref (Std.HashMap Name (Array String)))
    (m : Name) (r : DeclarationRange) (r' : DeclarationRange) : IO (Option String) := do
  let lines ← match (← cache.get)[m]? with
    | some ls => pure ls
    | none => do
      let rel := System.mkFilePath (m.components.map toString) |>.addExtension "lean"
      let mut found : Array String := #[]
      for root in roots do
        let p := root / rel
        if ← p.pathExists then
          found := (← IO.FS.readFile p).splitOn "\n" |>.toArray
          break
      cache.modify (·.insert m found)
      pure found
  if lines.isEmpty then return none
  let slice := lines.extract (r.pos.line - 1) r'.endPos.line
  return some ("\n".intercalate slice.toList)

def line (env : Environment) (roots : Array System.FilePath)
    (cache : IO.Ref (Std.HashMap Name (Array String))) (c : ConstantInfo) (m : Name) : MetaM Json := do
  let kind := kindOf env c
  let sig ← PrettyPrinter.ppSignature c.name
  let uses := c.type.getUsedConstants.filter (fun u => !skip env u) |>.map (toString ·)
  let mut fields : List (String × Json) :=
    [("name", toJson c.name.toString), ("kind", toJson kind),
     ("signature", toJson s!"{kind} {sig.fmt.pretty 100000}"),
     ("module", toJson m.toString), ("uses", toJson uses.toList.eraseDups)]
  if let some doc ← findDocString? env c.name then
    fields := fields ++ [("docstring", toJson doc.trim)]
  if let some ranges ← findDeclarationRanges? c.name then
    if let some src ← sourceText roots cache m ranges.range ranges.range then
      fields := fields ++ [("source", toJson src)]
  return Json.mkObj fields

def main (argv : List String) : IO UInt32 := do
  let args := parseArgs argv {}
  if args.modules.isEmpty then
    IO.eprintln "usage: extract [--prefix P]... [--src DIR]... Module..."
    return 2
  initSearchPath (← findSysroot)
  let env ← importModules (args.modules.map ({ module := · })) {} (trustLevel := 1024)
  let cache ← IO.mkRef ({} : Std.HashMap Name (Array String))
  let out ← IO.getStdout
  let ctx : Core.Context := { fileName := "<extract>", fileMap := default, maxHeartbeats := 0 }
  let run : MetaM Unit := do
    for (n, c) in env.constants.toList do
      if skip env n then continue
      let some m := moduleOf env n | continue
      unless wanted args.prefixes m do continue
      try
        out.putStrLn (← line env args.srcRoots cache c m).compress
      catch e =>
        IO.eprintln s!"skipped {n}: {← e.toMessageData.toString}"
  discard <| (run.run' {} {}).toIO ctx { env }
  return 0
