/**
 * The examples in the TSDoc of `@tickwork/runtime/testing` (and `/testing/commands`) and in the
 * README's "Testing your tasks" section type-check with the package's compiler settings, and
 * run. Blocks are written next to this file (the package name resolves from inside the package
 * only) and removed afterwards.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { CodeBlocks } from "@tickwork/testkit"
import { afterAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../", import.meta.url))
const dir = fileURLToPath(new URL(`./.testing-docs-${process.pid}/`, import.meta.url))

const testingDir = join(root, "src", "testing")
// Recursive: the command model's exports are declared in testing/internal/ and re-exported by
// testing/commands.ts, their examples with them.
const blocks = readdirSync(testingDir, { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".ts"))
  .sort()
  .flatMap((file) => CodeBlocks.fromTsdoc(readFileSync(join(testingDir, file), "utf8"), file))
const readme = readFileSync(join(root, "README.md"), "utf8")
const section = readme.split(/^## /m).find((s) => s.startsWith("Testing your tasks")) ?? ""
const readmeBlocks = CodeBlocks.fromMarkdown(section).map((b, k) => ({
  ...b,
  name: `README #${k + 1}`,
}))
const r = readmeBlocks.length
blocks.push(...readmeBlocks)

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe("testing entry point examples", () => {
  it("every export of the testing modules has an example, and the README has its section", () => {
    expect(blocks.length).toBeGreaterThan(20)
    expect(r).toBeGreaterThanOrEqual(2)
  })

  it("every block type-checks with the package's compiler settings", () => {
    expect(CodeBlocks.typecheck(blocks, root, join(dir, "check"))).toEqual([])
  }, 300_000)

  // Blocks that declare vitest tests are only type-checked.
  const runnable = blocks.filter((b) => !b.code.includes('from "vitest"'))
  it.each(runnable.map((b, i) => [b.name, b.code, i] as const))(
    "%s runs",
    async (_name, code, i) => {
      mkdirSync(dir, { recursive: true })
      const file = join(dir, `run${i}.ts`)
      writeFileSync(file, `${code}\nexport {}\n`)
      await import(/* @vite-ignore */ file)
    },
    60_000,
  )
})
