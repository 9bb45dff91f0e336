/**
 * Every citation of the behaviour contract resolves: a `SPEC §n` or `SPEC §n.m` (and a bare
 * `§n` in the same files, which cites the same contract) in `packages/*\/src`,
 * `packages/*\/test`, `examples` and the READMEs names a section, or a numbered rule of a
 * section, that `packages/core/SPEC.md` has. A citation of another document (`notes/x.md` §4) is
 * not one. Plain file reads, no build.
 *
 * The section sign is written `\u00a7` in this file's strings, so they are not citations.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const specPath = fileURLToPath(new URL("../SPEC.md", import.meta.url))

/** The sections and rules of a SPEC: `"3"` for `## 3. …`, `"3.4"` for rule `4.` under it. */
const anchors = (spec: string): { readonly ids: Set<string>; readonly problems: Array<string> } => {
  const ids = new Set<string>()
  const problems: Array<string> = []
  let section = 0
  let rule = 0
  spec.split("\n").forEach((line, k) => {
    const heading = /^## (\d+)\. /.exec(line)
    if (heading !== null) {
      const n = Number(heading[1])
      if (n !== section + 1) problems.push(`line ${k + 1}: section ${n} follows ${section}`)
      section = n
      rule = 0
      ids.add(String(n))
      return
    }
    const item = /^(\d+)\. /.exec(line)
    if (item !== null && section > 0) {
      const m = Number(item[1])
      if (m !== rule + 1) problems.push(`line ${k + 1}: rule ${section}.${m} follows ${rule}`)
      rule = m
      ids.add(`${section}.${m}`)
    }
  })
  return { ids, problems }
}

/** One citation: where it is and what it names (`"14.6"`). */
interface Citation {
  readonly file: string
  readonly line: number
  readonly target: string
}

const SIGN = "\u00a7"
/** A chain of references: one section, a list such as "3, 7 and 15", a rule such as "14.3". */
const CHAIN = new RegExp(
  `${SIGN}\\d+(?:\\.\\d+)?(?:(?:,\\s*|\\s+and\\s+|\\s+or\\s+|\\s*[–-]\\s*)${SIGN}\\d+(?:\\.\\d+)?)*`,
  "g",
)
const REF = new RegExp(`${SIGN}(\\d+(?:\\.\\d+)?)`, "g")
/** Text right before a chain that names another document: `notes/persistence.md` §4. */
const OTHER_DOCUMENT = /[\w./-]+\.md`?\)?\s*$/

/** The citations in one file's text. */
const citationsIn = (file: string, text: string): Array<Citation> => {
  const out: Array<Citation> = []
  text.split("\n").forEach((line, k) => {
    for (const chain of line.matchAll(CHAIN)) {
      const before = line.slice(Math.max(0, (chain.index ?? 0) - 60), chain.index)
      if (OTHER_DOCUMENT.test(before) && !/SPEC(\.md)?`?\s*$/.test(before)) continue
      for (const ref of chain[0].matchAll(REF)) {
        out.push({ file, line: k + 1, target: ref[1] as string })
      }
    }
  })
  return out
}

const TEXT = /\.(ts|tsx|mts|cts|js|mjs|cjs|md|html|css|json|sql|sh|ya?ml)$/

/** Text files under `dir`, skipping dependencies, build output and dot-folders. */
const files = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    if (name === "node_modules" || name === "dist" || name === "reports" || name.startsWith("."))
      return []
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return files(path)
    return TEXT.test(name) ? [path] : []
  })

/**
 * Where citations may be: each package's src, test and README, the examples, the root README,
 * and SPEC.md itself.
 */
const citingFiles = (): Array<string> => {
  const packages = join(root, "packages")
  // SPEC.md's own cross-references (rule 3.7 in §5's table) must resolve too.
  const out: Array<string> = [join(root, "README.md"), specPath]
  for (const name of readdirSync(packages)) {
    const dir = join(packages, name)
    if (!statSync(dir).isDirectory()) continue
    for (const sub of ["src", "test"]) {
      if (existsSync(join(dir, sub))) out.push(...files(join(dir, sub)))
    }
    if (existsSync(join(dir, "README.md"))) out.push(join(dir, "README.md"))
  }
  if (existsSync(join(root, "examples"))) out.push(...files(join(root, "examples")))
  return out
}

/** `file:line: SPEC §n` for every citation that names nothing in the spec. */
const unresolved = (citations: ReadonlyArray<Citation>, ids: ReadonlySet<string>) =>
  citations
    .filter((c) => !ids.has(c.target))
    .map((c) => `${c.file}:${c.line}: SPEC ${SIGN}${c.target} is not in packages/core/SPEC.md`)

describe("SPEC citations", () => {
  const spec = anchors(readFileSync(specPath, "utf8"))
  const citations = citingFiles().flatMap((path) =>
    citationsIn(relative(root, path), readFileSync(path, "utf8")),
  )

  it("SPEC.md numbers its sections and rules in order", () => {
    expect(spec.problems).toEqual([])
    // The project-wide contract's sections keep their numbers.
    for (let n = 1; n <= 21; n++) expect(spec.ids).toContain(String(n))
  })

  it("every citation in code, tests, examples and READMEs names a section or rule of SPEC.md", () => {
    // A scanner that found nothing would pass vacuously: the repository cites it hundreds of times.
    expect(citations.length).toBeGreaterThan(300)
    expect(unresolved(citations, spec.ids)).toEqual([])
  })

  it("finds a wrong citation and names its file and line", () => {
    const text = [
      "ok: SPEC \u00a73 and \u00a714.6",
      `list: SPEC \u00a75, \u00a799 and \u00a715`,
      "rule: \u00a73.99",
      "elsewhere: (`notes/persistence.md` \u00a74) is another document",
    ].join("\n")
    const found = citationsIn("x.ts", text)
    expect(found.map((c) => `${c.line}:${c.target}`)).toEqual([
      "1:3",
      "1:14.6",
      "2:5",
      "2:99",
      "2:15",
      "3:3.99",
    ])
    expect(unresolved(found, spec.ids)).toEqual([
      "x.ts:2: SPEC \u00a799 is not in packages/core/SPEC.md",
      "x.ts:3: SPEC \u00a73.99 is not in packages/core/SPEC.md",
    ])
  })

  it("reads a rule only under its section, and a skipped number as a problem", () => {
    const parsed = anchors(
      ["## 1. A", "1. one", "2. two", "## 2. B", "1. one", "3. three"].join("\n"),
    )
    expect([...parsed.ids]).toEqual(["1", "1.1", "1.2", "2", "2.1", "2.3"])
    expect(parsed.problems).toEqual(["line 6: rule 2.3 follows 1"])
  })

  it("each package README says where its citations point", () => {
    for (const name of ["core", "runtime", "durable", "cli"]) {
      const readme = readFileSync(join(root, "packages", name, "README.md"), "utf8")
      expect(readme.includes("packages/core/SPEC.md"), name).toBe(true)
    }
    const pkg = JSON.parse(readFileSync(join(root, "packages/core/package.json"), "utf8"))
    expect(pkg.files).toContain("SPEC.md")
  })
})
