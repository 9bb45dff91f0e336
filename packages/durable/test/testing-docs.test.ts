/**
 * The examples in the TSDoc of `@tickwork/durable/testing` type-check with the package's
 * compiler settings, and run (the README's Testing block is type-checked by readme.test.ts).
 * Blocks are written next to this file (the package name resolves from inside the package only)
 * and removed afterwards.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { CodeBlocks } from "@tickwork/testkit"
import { afterAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../", import.meta.url))
const dir = fileURLToPath(new URL(`./.testing-docs-${process.pid}/`, import.meta.url))
const testingDir = join(root, "src", "testing")
const blocks = readdirSync(testingDir, { encoding: "utf8" })
  .filter((f) => f.endsWith(".ts"))
  .sort()
  .flatMap((file) => CodeBlocks.fromTsdoc(readFileSync(join(testingDir, file), "utf8"), file))

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe("@tickwork/durable/testing examples", () => {
  it("has examples of the layer, run and the module", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(3)
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
