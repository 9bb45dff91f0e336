// Issue 24: no module over ~700 lines unless it is one algorithm, and then its header says so (the
// words "one algorithm" in its opening comment). A longer module holds more than one concept:
// split it by concept (style rule 1). Checked for the src of core, runtime and durable: the
// packages the issue names (the runtime's suite holds the repository-wide structure checks, as
// import-cycles.test.ts does).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/** Lines a module may have before it must say it is one algorithm. */
const MAX_LINES = 700

const packagesDir = fileURLToPath(new URL("../../", import.meta.url))

/** The modules of `dir` over {@link MAX_LINES} lines whose header does not say "one algorithm". */
const tooLong = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .flatMap((f) => {
      const text = readFileSync(join(dir, f), "utf8")
      const lines = text.split("\n").length
      const header = text.match(/^\/\*\*[\s\S]*?\*\//)?.[0] ?? ""
      return lines > MAX_LINES && !header.includes("one algorithm") ? [`${f}: ${lines} lines`] : []
    })

describe("module size", () => {
  it.each(["core", "runtime", "durable"])(
    `every %s module has at most ${MAX_LINES} lines, or its header says it is one algorithm`,
    (pkg) => {
      expect(tooLong(join(packagesDir, pkg, "src"))).toEqual([])
    },
  )

  it("flags an over-long module, unless its header says it is one algorithm", () => {
    const dir = mkdtempSync(join(tmpdir(), "module-size-"))
    try {
      const body = "x\n".repeat(MAX_LINES + 1)
      writeFileSync(join(dir, "long.ts"), `/** Two concepts. */\n${body}`)
      writeFileSync(
        join(dir, "whole.ts"),
        `/** The matcher: one algorithm, kept whole. */\n${body}`,
      )
      writeFileSync(join(dir, "short.ts"), "/** Short. */\nx\n")
      expect(tooLong(dir)).toEqual([`long.ts: ${MAX_LINES + 3} lines`])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
