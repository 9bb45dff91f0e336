// Issue 24: no module over ~700 lines unless it is one algorithm, and then its header says so (the
// words "one algorithm" in its opening comment). A longer module holds more than one concept:
// split it by concept (style rule 1). Checked for the runtime's src, the package this suite owns.
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"

/** Lines a module may have before it must say it is one algorithm. */
const MAX_LINES = 700

const srcDir = fileURLToPath(new URL("../src/", import.meta.url))

it(`every runtime module has at most ${MAX_LINES} lines, or its header says it is one algorithm`, () => {
  const tooLong = readdirSync(srcDir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .flatMap((f) => {
      const text = readFileSync(join(srcDir, f), "utf8")
      const lines = text.split("\n").length
      const header = text.match(/^\/\*\*[\s\S]*?\*\//)?.[0] ?? ""
      return lines > MAX_LINES && !header.includes("one algorithm")
        ? [`${relative(srcDir, join(srcDir, f))}: ${lines} lines`]
        : []
    })
  expect(tooLong).toEqual([])
})
