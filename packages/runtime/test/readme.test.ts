/**
 * Every ```ts block of the package README type-checks with the package's compiler settings, and
 * so do the examples in `Prometheus`'s and `Main`'s TSDoc. (The "Testing your tasks" blocks are also run, by
 * testing-docs.test.ts.) Most blocks start servers or run forever, so they are only
 * type-checked. They are written next to this file, because the package name resolves from
 * inside the package only, and removed afterwards.
 */
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { CodeBlocks } from "@tickwork/testkit"
import { afterAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../", import.meta.url))
const dir = fileURLToPath(new URL(`./.readme-${process.pid}/`, import.meta.url))

const blocks = [
  ...CodeBlocks.fromMarkdown(readFileSync(join(root, "README.md"), "utf8"), "README "),
  ...CodeBlocks.fromTsdoc(
    readFileSync(join(root, "src", "Prometheus.ts"), "utf8"),
    "Prometheus.ts TSDoc",
  ),
  ...CodeBlocks.fromTsdoc(readFileSync(join(root, "src", "Main.ts"), "utf8"), "Main.ts TSDoc"),
]

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe("README examples", () => {
  it("cover the observability sections", () => {
    const names = blocks.map((b) => b.name)
    expect(names.some((n) => n.includes("Prometheus #"))).toBe(true)
    expect(names.some((n) => n.includes("OpenTelemetry (OTLP) #"))).toBe(true)
    expect(names).toContain("Prometheus.ts TSDoc #1")
    expect(names).toContain("Main.ts TSDoc #1")
  })

  it("every block type-checks with the package's compiler settings", () => {
    expect(CodeBlocks.typecheck(blocks, root, dir)).toEqual([])
  }, 300_000)
})
