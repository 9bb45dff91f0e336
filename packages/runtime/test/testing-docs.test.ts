/**
 * The examples in the TSDoc of `@tickwork/runtime/testing` (and `/testing/commands`) and in the
 * README's "Testing your tasks" section type-check with the package's compiler settings, and
 * run. Blocks are written next to this file (the package name resolves from inside the package
 * only) and removed afterwards.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { afterAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../", import.meta.url))
const dir = fileURLToPath(new URL(`./.testing-docs-${process.pid}/`, import.meta.url))

const blocks: Array<{ name: string; code: string }> = []
const testingDir = join(root, "src", "testing")
for (const file of readdirSync(testingDir)
  .filter((f) => f.endsWith(".ts"))
  .sort()) {
  const text = readFileSync(join(testingDir, file), "utf8")
  let k = 0
  for (const m of text.matchAll(/^ \* ```ts\n([\s\S]*?)^ \* ```$/gm)) {
    const code = (m[1] as string).replace(/^ \*( |$)/gm, "")
    blocks.push({ name: `${file} #${++k}`, code })
  }
}
const readme = readFileSync(join(root, "README.md"), "utf8")
const section = readme.split(/^## /m).find((s) => s.startsWith("Testing your tasks")) ?? ""
let r = 0
for (const m of section.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
  blocks.push({ name: `README #${++r}`, code: m[1] as string })
}

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe("testing entry point examples", () => {
  it("every export of the testing modules has an example, and the README has its section", () => {
    expect(blocks.length).toBeGreaterThan(20)
    expect(r).toBeGreaterThanOrEqual(2)
  })

  it("every block type-checks with the package's compiler settings", () => {
    const config = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile)
    const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root)
    const checkDir = join(dir, "check")
    mkdirSync(checkDir, { recursive: true })
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
    // The compiler over every block takes seconds, more on a busy machine: bound it generously.
  }, 120_000)

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
