/**
 * Every public export of every workspace package carries TSDoc: modules under `src/` (not
 * `src/internal/`), each exported declaration preceded by a `/** … *\/` comment.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const packagesDir = fileURLToPath(new URL("../../", import.meta.url))

const sources = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === "internal" ? [] : sources(path)
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : []
  })

const hasDoc = (node: ts.Node, text: string): boolean =>
  (ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []).some((c) =>
    text.slice(c.pos, c.end).startsWith("/**"),
  )

const isExported = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) &&
  (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)

/** Names of exported declarations without TSDoc in one file. */
const undocumented = (file: string): Array<string> => {
  const text = readFileSync(file, "utf8")
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true)
  const missing: Array<string> = []
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement)) {
      // `export * as X from "./X.ts"` re-exports a module: it is documented at the re-export.
      if (statement.exportClause !== undefined && ts.isNamespaceExport(statement.exportClause)) {
        if (!hasDoc(statement, text)) missing.push(statement.exportClause.name.text)
      }
      continue
    }
    if (!isExported(statement) || hasDoc(statement, text)) continue
    const name = ts.isVariableStatement(statement)
      ? statement.declarationList.declarations.map((d) => d.name.getText(source)).join(", ")
      : ((statement as ts.DeclarationStatement).name?.getText(source) ?? "(anonymous)")
    missing.push(name)
  }
  return missing
}

const packages = readdirSync(packagesDir).filter((name) =>
  existsSync(join(packagesDir, name, "src", "index.ts")),
)

describe("TSDoc", () => {
  it.each(packages)("every public export of packages/%s has TSDoc", (name) => {
    const missing = sources(join(packagesDir, name, "src")).flatMap((file) =>
      undocumented(file).map((n) => `${relative(packagesDir, file)}: ${n}`),
    )
    expect(missing).toEqual([])
  })
})
