/**
 * Every ```ts block of the package README type-checks with the package's compiler settings, and
 * so does the example in `Prometheus`'s TSDoc. (The "Testing your tasks" blocks are also run, by
 * testing-docs.test.ts.) Most blocks start servers or run forever, so they are only
 * type-checked. They are written next to this file, because the package name resolves from
 * inside the package only, and removed afterwards.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { afterAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../", import.meta.url))
const dir = fileURLToPath(new URL(`./.readme-${process.pid}/`, import.meta.url))

const blocks: Array<{ name: string; code: string }> = []
let heading = "(top)"
const readme = readFileSync(join(root, "README.md"), "utf8")
for (const part of readme.split(/^(```ts\n[\s\S]*?^```)$/m)) {
  if (part.startsWith("```ts\n")) {
    blocks.push({ name: `README ${heading} #${blocks.length + 1}`, code: part.slice(6, -3) })
  } else {
    const last = [...part.matchAll(/^#{1,6} (.+)$/gm)].at(-1)
    if (last !== undefined) heading = last[1] as string
  }
}
const prometheus = readFileSync(join(root, "src", "Prometheus.ts"), "utf8")
for (const m of prometheus.matchAll(/^ \* ```ts\n([\s\S]*?)^ \* ```$/gm)) {
  blocks.push({ name: "Prometheus.ts TSDoc", code: (m[1] as string).replace(/^ \*( |$)/gm, "") })
}

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe("README examples", () => {
  it("cover the observability sections", () => {
    const names = blocks.map((b) => b.name)
    expect(names.some((n) => n.includes("Prometheus #"))).toBe(true)
    expect(names.some((n) => n.includes("OpenTelemetry (OTLP) #"))).toBe(true)
    expect(names).toContain("Prometheus.ts TSDoc")
  })

  it("every block type-checks with the package's compiler settings", () => {
    const config = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile)
    const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root)
    mkdirSync(dir, { recursive: true })
    // `export {}` keeps each block a module of its own.
    const files = blocks.map((b, i) => {
      const file = join(dir, `block${i}.ts`)
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
})
