/**
 * Runs every ```ts block of the package README as a module, and type-checks them all with the
 * package's compiler settings, so the examples cannot rot. Each block imports from
 * "@tickwork/core" (resolved to the sources) and checks its own results with node:assert. The
 * blocks are written next to this file, because the package name resolves from inside the
 * package only, and removed afterwards.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { CodeBlocks } from "@tickwork/testkit"
import { afterAll, describe, expect, it } from "vitest"

const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8")
const dir = fileURLToPath(new URL(`./.readme-${process.pid}/`, import.meta.url))

const blocks = CodeBlocks.fromMarkdown(readme)

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe("README examples", () => {
  it("has examples for every topic it promises", () => {
    const topics = new Set(blocks.map((b) => b.name.replace(/ #\d+$/, "")))
    for (const topic of [
      "The driver",
      "Kinds of schedule",
      "Missed runs",
      "Retries and the failure policy",
      "Cancellation",
      "Ids, status and retention",
      "Errors",
      "The kernel, directly",
      "Controls: pause, resume, update, tags",
      "Catch-up windows and circuit breakers",
      "Preview, explain, simulate",
    ]) {
      expect(topics).toContain(topic)
    }
    for (const b of blocks) expect(b.code).toContain('from "@tickwork/core"')
  })

  it.each(blocks.map((b, i) => [b.name, b.code, i] as const))("%s runs", async (_name, code, i) => {
    mkdirSync(dir, { recursive: true })
    const file = join(dir, `block${i}.ts`)
    writeFileSync(file, code)
    await import(/* @vite-ignore */ file)
  })

  it("every block type-checks with the package's compiler settings", () => {
    const root = fileURLToPath(new URL("../", import.meta.url))
    expect(CodeBlocks.typecheck(blocks, root, join(dir, "check"), { unusedLocals: true })).toEqual(
      [],
    )
  }, 300_000)
})
