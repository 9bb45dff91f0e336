/**
 * The root README's ```ts blocks: every one type-checks with the workspace's compiler settings,
 * and those that end on their own run. Blocks that start a program under `runMain` (which runs
 * until a signal) are only type-checked. The blocks are written next to this file, where every
 * package they import resolves (to the sources), and removed afterwards.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { afterAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../", import.meta.url))
const readme = readFileSync(fileURLToPath(new URL("../../../README.md", import.meta.url)), "utf8")
const dir = fileURLToPath(new URL(`./.readme-${process.pid}/`, import.meta.url))

/** Each ts block with the heading it sits under. */
const blocks: Array<{ name: string; code: string }> = []
let heading = "(top)"
for (const part of readme.split(/^(```ts\n[\s\S]*?^```)$/m)) {
  if (part.startsWith("```ts\n")) {
    blocks.push({ name: `${heading} #${blocks.length + 1}`, code: part.slice(6, -3) })
  } else {
    const last = [...part.matchAll(/^#{1,6} (.+)$/gm)].at(-1)
    if (last !== undefined) heading = last[1] as string
  }
}
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
      noUnusedLocals: false,
    })
    const errors = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file !== undefined && files.includes(d.file.fileName))
      .map((d) => {
        const i = files.indexOf((d.file as ts.SourceFile).fileName)
        const { line } = (d.file as ts.SourceFile).getLineAndCharacterOfPosition(d.start ?? 0)
        return `${blocks[i]?.name}:${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
      })
    expect(errors).toEqual([])
  }, 120_000)

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
