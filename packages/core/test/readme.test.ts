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
import ts from "typescript"
import { afterAll, describe, expect, it } from "vitest"

const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8")
const dir = fileURLToPath(new URL(`./.readme-${process.pid}/`, import.meta.url))

/** Each ts block with the heading it sits under. */
const blocks: Array<{ name: string; code: string }> = []
let heading = "(top)"
let count = 0
for (const part of readme.split(/^(```ts\n[\s\S]*?^```)$/m)) {
  if (part.startsWith("```ts\n")) {
    count++
    blocks.push({ name: `${heading} #${count}`, code: part.slice("```ts\n".length, -3) })
  } else {
    const headings = [...part.matchAll(/^#{1,6} (.+)$/gm)]
    const last = headings.at(-1)
    if (last !== undefined) heading = last[1] as string
  }
}

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
    const config = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile)
    const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root)
    const checkDir = join(dir, "check")
    mkdirSync(checkDir, { recursive: true })
    // `export {}` keeps each block a module of its own, as it is when run.
    const files = blocks.map((b, i) => {
      const file = join(checkDir, `block${i}.ts`)
      writeFileSync(file, `${b.code}\nexport {}\n`)
      return file
    })
    const program = ts.createProgram(files, {
      ...options,
      noEmit: true,
      composite: false,
      incremental: false,
      declaration: false,
      declarationMap: false,
    })
    const problems = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file === undefined ? "" : `${d.file.fileName.slice(checkDir.length + 1)}: `
      return where + ts.flattenDiagnosticMessageText(d.messageText, "\n")
    })
    expect(problems).toEqual([])
  }, 120_000)
})
