// No package's src files import each other in a cycle (style rule 1; issue 24's "no import
// cycles"). A cycle makes module initialisation order matter and hides which of two modules
// owns a concept. Type-only imports count: `import type` still ties two modules into one unit
// for a reader and for `tsc -b`, and it is how the cycles this test was written against began.
//
// The graph is built with TypeScript's own pre-processor (every `import`, `import type`,
// `export … from` and `import()` outside comments) and its module resolution, so a specifier
// means here what it means to `tsc`. Only edges between files of the same package's src count:
// dependencies between packages point one way and are checked by `tsc -b`'s project references.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const packagesDir = fileURLToPath(new URL("../../", import.meta.url))

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"))
    .map((e) => join(e.parentPath, e.name))
    .sort()

const compilerOptions: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  allowImportingTsExtensions: true,
  customConditions: ["@tickwork/source"],
}

/** Each file of `srcDir` → the files of `srcDir` it imports (absolute paths). */
export const importGraph = (srcDir: string): ReadonlyMap<string, ReadonlyArray<string>> => {
  const files = sourceFiles(srcDir)
  const inPackage = new Set(files)
  const graph = new Map<string, ReadonlyArray<string>>()
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true)
    const targets = new Set<string>()
    for (const { fileName } of info.importedFiles) {
      const resolved = ts.resolveModuleName(fileName, file, compilerOptions, ts.sys).resolvedModule
      if (resolved !== undefined && inPackage.has(resolved.resolvedFileName)) {
        targets.add(resolved.resolvedFileName)
      }
    }
    graph.set(file, [...targets].sort())
  }
  return graph
}

/**
 * The strongly connected components with more than one file, or one file importing itself:
 * exactly the sets of files that take part in some cycle. Tarjan's algorithm, O(files + imports).
 */
export const cyclicGroups = (
  graph: ReadonlyMap<string, ReadonlyArray<string>>,
): ReadonlyArray<ReadonlyArray<string>> => {
  /** Each visited file's visit order and the lowest visit order it reaches on the stack. */
  const seen = new Map<string, { readonly index: number; low: number }>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const groups: Array<ReadonlyArray<string>> = []
  const visit = (v: string): void => {
    const mine = { index: seen.size, low: seen.size }
    seen.set(v, mine)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      const theirs = seen.get(w)
      if (theirs === undefined) {
        visit(w)
        mine.low = Math.min(mine.low, (seen.get(w) as { low: number }).low)
      } else if (onStack.has(w)) {
        mine.low = Math.min(mine.low, theirs.index)
      }
    }
    if (mine.low === mine.index) {
      const group: Array<string> = []
      let w: string | undefined
      do {
        w = stack.pop() as string
        onStack.delete(w)
        group.push(w)
      } while (w !== v)
      if (group.length > 1 || (graph.get(v) ?? []).includes(v)) groups.push(group.sort())
    }
  }
  for (const v of graph.keys()) if (!seen.has(v)) visit(v)
  return groups
}

const cyclesIn = (pkg: string): ReadonlyArray<ReadonlyArray<string>> => {
  const srcDir = join(packagesDir, pkg, "src")
  return cyclicGroups(importGraph(srcDir)).map((g) => g.map((f) => relative(srcDir, f)))
}

describe("import cycles", () => {
  describe("cyclicGroups", () => {
    it("finds a two-file cycle, a self-import and nothing in a chain", () => {
      const graph = new Map([
        ["a", ["b"]],
        ["b", ["a", "c"]],
        ["c", ["d"]],
        ["d", []],
        ["e", ["e"]],
      ])
      expect(cyclicGroups(graph)).toEqual([["a", "b"], ["e"]])
    })
  })

  describe("importGraph", () => {
    it("sees type-only imports, re-exports and import(), and ignores imports in comments", () => {
      const dir = mkdtempSync(join(tmpdir(), "import-graph-"))
      try {
        writeFileSync(join(dir, "a.ts"), 'import type { B } from "./b.ts"\nexport type A = B\n')
        writeFileSync(join(dir, "b.ts"), 'export type { C as B } from "./c.ts"\n')
        writeFileSync(
          join(dir, "c.ts"),
          'export type C = number\nexport const d = () => import("./d.ts")\n',
        )
        writeFileSync(
          join(dir, "d.ts"),
          '// import "./a.ts"\n/**\n * import { A } from "./a.ts"\n */\nimport { Effect } from "effect"\nexport const e = Effect.void\n',
        )
        const graph = importGraph(dir)
        const at = (f: string) => join(dir, f)
        expect(Object.fromEntries(graph)).toEqual({
          [at("a.ts")]: [at("b.ts")],
          [at("b.ts")]: [at("c.ts")],
          [at("c.ts")]: [at("d.ts")],
          [at("d.ts")]: [],
        })
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  })

  for (const pkg of ["core", "runtime", "durable", "cli"]) {
    it(`${pkg}'s src has no import cycle`, () => {
      expect(cyclesIn(pkg)).toEqual([])
    })
  }
})
