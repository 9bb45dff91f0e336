/**
 * Every ```ts block of the README type-checks with the package's compiler settings. The blocks
 * are written next to this file, where `@tickwork/cli` resolves to the sources, and removed
 * afterwards. (The README's `console` samples are run by readme.test.ts; this check has a file
 * of its own so that the compiler's garbage does not share a test worker with SQLite handles:
 * better-sqlite3 12 on Node 24 can abort when a statement is collected at the worker's exit.)
 */
import { readFileSync, rmSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { CodeBlocks } from "@tickwork/testkit"
import { afterAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../", import.meta.url))
const dir = fileURLToPath(new URL(`./.readme-code-${process.pid}/`, import.meta.url))
const blocks = CodeBlocks.fromMarkdown(
  readFileSync(new URL("../README.md", import.meta.url), "utf8"),
  "README ",
)

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe("README code", () => {
  it("every ts block type-checks with the package's compiler settings", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(1)
    expect(CodeBlocks.typecheck(blocks, root, dir)).toEqual([])
  }, 300_000)
})
