/**
 * Every ```ts block of the package README type-checks with the package's compiler settings.
 * Most blocks start a worker that runs until a signal, so they are only type-checked. They are
 * written next to this file, because the package name resolves from inside the package only,
 * and removed afterwards.
 */
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { CodeBlocks } from "@tickwork/testkit"
import { afterAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../", import.meta.url))
const dir = fileURLToPath(new URL(`./.readme-${process.pid}/`, import.meta.url))

const blocks = CodeBlocks.fromMarkdown(readFileSync(join(root, "README.md"), "utf8"), "README ")

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe("README examples", () => {
  it("cover the controls", () => {
    expect(blocks.some((b) => b.code.includes("pauseAll("))).toBe(true)
    expect(blocks.some((b) => b.code.includes("breakers:"))).toBe(true)
  })

  it("every block type-checks with the package's compiler settings", () => {
    expect(CodeBlocks.typecheck(blocks, root, dir)).toEqual([])
  }, 120_000)
})
