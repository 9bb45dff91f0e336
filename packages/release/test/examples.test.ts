/**
 * The examples' READMEs: every example has one, it says how to run the example from the
 * repository root with the command its package.json really has, and every ```ts block in them
 * type-checks with the workspace's compiler settings (written next to this file, where every
 * package resolves to its sources, and removed afterwards). The examples' console output depends
 * on the real clock (times, lateness, durations), so their READMEs describe it instead of
 * quoting it; the CLI's README, whose output is deterministic, is compared line by line by
 * packages/cli/test/readme.test.ts.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { CodeBlocks } from "@tickwork/testkit"
import { afterAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../", import.meta.url))
const examplesDir = fileURLToPath(new URL("../../../examples/", import.meta.url))
const dir = fileURLToPath(new URL(`./.examples-${process.pid}/`, import.meta.url))

const examples = readdirSync(examplesDir, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(examplesDir, d.name, "package.json")))
  .map((d) => d.name)
  .sort()

const readmeOf = (name: string): string => {
  const file = join(examplesDir, name, "README.md")
  return existsSync(file) ? readFileSync(file, "utf8") : ""
}

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe("example READMEs", () => {
  it("finds the examples", () => {
    expect(examples).toEqual(
      expect.arrayContaining(["durable", "inspector", "model-based-testing", "quickstart"]),
    )
  })

  it.each(examples)("%s has a README that says how to run it from the root", (name) => {
    const readme = readmeOf(name)
    expect(readme, `examples/${name}/README.md`).not.toBe("")
    const pkg = JSON.parse(readFileSync(join(examplesDir, name, "package.json"), "utf8")) as {
      readonly name: string
      readonly scripts: Record<string, string>
    }
    expect(pkg.scripts.start).toBeDefined()
    const command = name === "quickstart" ? "pnpm demo" : `pnpm --filter ${pkg.name} start`
    expect(readme).toContain(command)
  })

  it("every ts block type-checks with the workspace's compiler settings", () => {
    const blocks = examples.flatMap((name) =>
      CodeBlocks.fromMarkdown(readmeOf(name), `examples/${name} `),
    )
    expect(CodeBlocks.typecheck(blocks, root, dir)).toEqual([])
  }, 300_000)
})
