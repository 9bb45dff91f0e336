/**
 * The code examples of the workspace's READMEs and TSDoc, as tests see them: extracted from
 * markdown or from TSDoc comments, and type-checked together with a package's compiler settings.
 *
 * @since 0.1.0
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import ts from "typescript"

/**
 * One example: where it stands, and its code.
 *
 * @category models
 * @since 0.1.0
 */
export interface Block {
  readonly name: string
  readonly code: string
}

/**
 * Every ```ts block of a markdown text, named `<prefix><heading> #<n>` after the heading above it
 * (`n` counts the blocks of the whole text).
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromMarkdown = (markdown: string, prefix = ""): Array<Block> => {
  const blocks: Array<Block> = []
  let heading = "(top)"
  for (const part of markdown.split(/^(```ts\n[\s\S]*?^```)$/m)) {
    if (part.startsWith("```ts\n")) {
      blocks.push({
        name: `${prefix}${heading} #${blocks.length + 1}`,
        code: part.slice("```ts\n".length, -3),
      })
    } else {
      const last = [...part.matchAll(/^#{1,6} (.+)$/gm)].at(-1)
      if (last !== undefined) heading = last[1] as string
    }
  }
  return blocks
}

/**
 * Every ```ts block of the TSDoc comments in a source text (leading ` * ` removed), named
 * `<name> #<n>`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromTsdoc = (source: string, name: string): Array<Block> =>
  [...source.matchAll(/^ \* ```ts\n([\s\S]*?)^ \* ```$/gm)].map((m, k) => ({
    name: `${name} #${k + 1}`,
    code: (m[1] as string).replace(/^ \*( |$)/gm, ""),
  }))

/**
 * Type-checks `blocks` with the tsconfig of the package at `root`, each written to `dir` as a
 * module of its own (`export {}`, as it is when run). Returns one `name:line: message` per
 * problem in a block: `[]` when every block checks. `unusedLocals` keeps the package's
 * noUnusedLocals (off by default: an example may name a value only to show it). Seconds per
 * call: it runs the compiler.
 *
 * @category checks
 * @since 0.1.0
 */
export const typecheck = (
  blocks: ReadonlyArray<Block>,
  root: string,
  dir: string,
  options: { readonly unusedLocals?: boolean } = {},
): Array<string> => {
  const config = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile)
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root).options
  mkdirSync(dir, { recursive: true })
  const files = blocks.map((b, i) => {
    const file = join(dir, `block${i}.ts`)
    writeFileSync(file, `${b.code}\nexport {}\n`)
    return file
  })
  const program = ts.createProgram(files, {
    ...parsed,
    noEmit: true,
    composite: false,
    incremental: false,
    declaration: false,
    declarationMap: false,
    ...(options.unusedLocals === true ? {} : { noUnusedLocals: false }),
  })
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file !== undefined && files.includes(d.file.fileName))
    .map((d) => {
      const i = files.indexOf((d.file as ts.SourceFile).fileName)
      const { line } = (d.file as ts.SourceFile).getLineAndCharacterOfPosition(d.start ?? 0)
      return `${blocks[i]?.name}:${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
    })
}
