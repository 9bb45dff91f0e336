/**
 * The root README's ```ts blocks: every one type-checks with the workspace's compiler settings,
 * and those that end on their own run. Blocks that start a program under `runMain` (which runs
 * until a signal) are only type-checked. The blocks are written next to this file, where every
 * package they import resolves (to the sources), and removed afterwards.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { CodeBlocks } from "@tickwork/testkit"
import { afterAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../", import.meta.url))
const readme = readFileSync(fileURLToPath(new URL("../../../README.md", import.meta.url)), "utf8")
const dir = fileURLToPath(new URL(`./.readme-${process.pid}/`, import.meta.url))

const blocks = CodeBlocks.fromMarkdown(readme)
const runsForever = (code: string) => code.includes("runMain(")
const runnable = blocks.filter((b) => !runsForever(b.code))

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe("root README examples", () => {
  it("show the Effect service and the core driver", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(2)
    expect(blocks.some((b) => b.code.includes('from "@tickwork/runtime"'))).toBe(true)
    expect(runnable.some((b) => b.code.includes('from "@tickwork/core"'))).toBe(true)
  })

  it("every block type-checks with the workspace's compiler settings", () => {
    expect(CodeBlocks.typecheck(blocks, root, join(dir, "check"))).toEqual([])
  }, 300_000)

  it.each(runnable.map((b, i) => [b.name, b.code, i] as const))(
    "%s runs",
    async (_name, code, i) => {
      mkdirSync(dir, { recursive: true })
      const file = join(dir, `run${i}.ts`)
      writeFileSync(file, code)
      await import(/* @vite-ignore */ file)
    },
    60_000,
  )
})
