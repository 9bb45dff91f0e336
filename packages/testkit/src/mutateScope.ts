/**
 * Which test files exercise one source module, for a narrowed mutation run
 * (`pnpm mutate core Schedule`): found from the imports alone, without running anything.
 *
 * A test file exercises a module when it imports it by path, or imports its namespace from the
 * package's `src/index.ts` (`import { Heap } from "../src/index.ts"`), or imports a test helper
 * (a non-`.test.ts` file under `test/`) that does. A module that `index.ts` does not export
 * (`src/internal/…`) is exercised through the modules that import it: the search climbs through
 * internal importers to the first exported ones, and stops there, so a test reaching the module
 * only through a larger one (the kernel through `Kernel`) is not selected. That keeps the run
 * small, and makes its score a lower bound: the tests left out can only kill more mutants. An
 * exported module that no test imports is treated as an internal one.
 *
 * Scope `own` is narrower still, for a module nearly every test imports (`Schedule`): only the
 * test files named after the module or an exported importer reached (`Schedule.test.ts`), and
 * those importing one of them by path (`CronDialect.test.ts` imports `src/internal/cron.ts`).
 *
 * @since 0.1.0
 */
import { readdirSync, readFileSync } from "node:fs"
import { basename, dirname, join, relative, resolve } from "node:path"

/** Test files whose text the mutation runs leave out: they read the sources, which mutants rewrite. */
const textTests = /(^|\/)(docs|readme|testing-docs)\.test\.ts$/

const listTs = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith(".ts"))
    .map((d) => join(d.parentPath, d.name))

/** One import of a file: the absolute path it names (when relative) and its value bindings. */
interface Import {
  readonly target: string | undefined
  readonly names: ReadonlyArray<string>
}

// Matches `import … from "x"` and `export … from "x"` over several lines; a type-only import
// (`import type { … }`) carries no runtime code, so it exercises nothing.
const importPattern = /^(import|export)(\s+type\b)?([^;]*?)\s+from\s+"([^"]+)"/gms

const importsOf = (file: string): ReadonlyArray<Import> =>
  [...readFileSync(file, "utf8").matchAll(importPattern)]
    .filter((m) => m[2] === undefined)
    .map((m) => {
      const specifier = m[4] ?? ""
      const braces = /\{([^}]*)\}/s.exec(m[3] ?? "")?.[1] ?? ""
      const names = braces
        .split(",")
        .map((n) => n.trim())
        .filter((n) => n !== "" && !n.startsWith("type "))
        .map((n) => n.split(/\s+as\s+/)[0] ?? n)
      const target = specifier.startsWith(".") ? resolve(dirname(file), specifier) : undefined
      return { target, names }
    })

/**
 * The test files (paths relative to `packageDir`, sorted) that exercise `module` (a path relative
 * to `packageDir`, e.g. `src/internal/cron.ts`), as described above. Empty when none does.
 */
export const testFilesFor = (
  packageDir: string,
  module: string,
  scope: "importers" | "own" = "importers",
): ReadonlyArray<string> => {
  const found = select(packageDir, module, scope, true)
  // An exported module no test imports (the runtime's Recorder, used by its Scheduler) is
  // exercised through its importers, as an internal one is.
  return found.length > 0 ? found : select(packageDir, module, scope, false)
}

const select = (
  packageDir: string,
  module: string,
  scope: "importers" | "own",
  stopAtExported: boolean,
): ReadonlyArray<string> => {
  const root = resolve(packageDir)
  const index = join(root, "src", "index.ts")
  const sources = listTs(join(root, "src"))
  const importsBySource = new Map(sources.map((f) => [f, importsOf(f)]))
  // Namespace name by the exported module's path: `export * as Heap from "./Heap.ts"`.
  const namespaces = new Map<string, string>()
  for (const m of readFileSync(index, "utf8").matchAll(/export \* as (\w+) from "([^"]+)"/g)) {
    namespaces.set(resolve(root, "src", m[2] ?? ""), m[1] ?? "")
  }

  // The module and its internal importers, up to (and including) the first exported ones.
  const reached = new Set([resolve(root, module)])
  const pending = [...reached]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (namespaces.has(next) && (stopAtExported || next !== resolve(root, module))) continue
    for (const [source, imports] of importsBySource) {
      if (source !== index && !reached.has(source) && imports.some((i) => i.target === next)) {
        reached.add(source)
        pending.push(source)
      }
    }
  }
  const names = new Set([...reached].flatMap((f) => namespaces.get(f) ?? []))
  // `own`: only the tests named after a reached module (`Heap.test.ts`) or importing one by path.
  if (scope === "own") {
    const own = new Set([...reached].map((f) => `${basename(f, ".ts")}.test.ts`))
    return listTs(join(root, "test"))
      .filter(
        (f) =>
          own.has(basename(f)) ||
          (f.endsWith(".test.ts") &&
            importsOf(f).some((i) => i.target !== undefined && reached.has(i.target))),
      )
      .map((f) => relative(root, f))
      .sort()
  }

  const testSide = listTs(join(root, "test"))
  const uses = new Set<string>()
  const direct = (file: string) =>
    importsOf(file).some(
      (i) =>
        (i.target !== undefined && reached.has(i.target)) ||
        (i.target === index && i.names.some((n) => names.has(n))) ||
        (i.target !== undefined && uses.has(i.target)),
    )
  // Helpers first, to a fixed point (a helper may import another), then the test files.
  const helpers = testSide.filter((f) => !f.endsWith(".test.ts"))
  for (let grew = true; grew; ) {
    grew = false
    for (const helper of helpers) {
      if (!uses.has(helper) && direct(helper)) {
        uses.add(helper)
        grew = true
      }
    }
  }
  return testSide
    .filter((f) => f.endsWith(".test.ts") && direct(f))
    .map((f) => relative(root, f))
    .filter((f) => !textTests.test(f))
    .sort()
}
