import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { testFilesFor } from "../src/mutateScope.ts"

// A package laid out like core: an index of namespaces, an internal module under an exported one,
// a larger exported module importing that one, and tests reaching them in each way.
const fixture = (): string => {
  const root = mkdtempSync(join(tmpdir(), "mutate-scope-"))
  const files: Record<string, string> = {
    "src/index.ts": [
      'export * as Heap from "./Heap.ts"',
      'export * as Schedule from "./Schedule.ts"',
      'export * as Kernel from "./Kernel.ts"',
      'export * as Recorder from "./Recorder.ts"',
      'export * as Driver from "./Driver.ts"',
    ].join("\n"),
    "src/internal/zone.ts": "export const z = 1",
    "src/internal/cron.ts": 'import { z } from "./zone.ts"\nexport const c = z',
    "src/Schedule.ts": 'import { c } from "./internal/cron.ts"\nexport const s = c',
    "src/Heap.ts": "export const h = 1",
    "src/Recorder.ts": "export const r = 1",
    "src/Driver.ts": 'import { r } from "./Recorder.ts"\nexport const d = r',
    "src/internal/table.ts": 'import { s } from "../Schedule.ts"\nexport const t = s',
    "src/Kernel.ts": 'import { t } from "./internal/table.ts"\nexport const k = t',
    "test/support.ts": 'import { Heap } from "../src/index.ts"\nexport const heap = Heap',
    "test/Heap.test.ts": 'import { Heap } from "../src/index.ts"',
    "test/Driver.test.ts": 'import { Driver } from "../src/index.ts"',
    "test/Task.test.ts": 'import { heap } from "./support.ts"',
    "test/Schedule.test.ts": 'import {\n  Heap,\n  Schedule as S,\n} from "../src/index.ts"',
    "test/CronDialect.test.ts": 'import { c } from "../src/internal/cron.ts"',
    "test/Kernel.test.ts": 'import { Kernel, type Schedule } from "../src/index.ts"',
    "test/spec/s03.test.ts":
      'import type { Heap } from "../../src/index.ts"\nimport { Schedule } from "../../src/index.ts"',
    "test/docs.test.ts": 'import { Schedule } from "../src/index.ts"',
  }
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

describe("testFilesFor", () => {
  const root = fixture()

  it("selects the tests importing an exported module's namespace, directly or through a helper", () => {
    expect(testFilesFor(root, "src/Heap.ts")).toEqual([
      "test/Heap.test.ts",
      "test/Schedule.test.ts",
      "test/Task.test.ts",
    ])
  })

  it("ignores type-only imports, and the docs tests that read the sources' text", () => {
    expect(testFilesFor(root, "src/Schedule.ts")).toEqual([
      "test/Schedule.test.ts",
      "test/spec/s03.test.ts",
    ])
  })

  it("climbs from an internal module to the exported modules importing it, and no further", () => {
    // zone → cron → Schedule (exported: stop); Kernel reaches Schedule only through table.
    expect(testFilesFor(root, "src/internal/zone.ts")).toEqual([
      "test/CronDialect.test.ts",
      "test/Schedule.test.ts",
      "test/spec/s03.test.ts",
    ])
  })

  it("an exported module no test imports is reached through its importers", () => {
    expect(testFilesFor(root, "src/Recorder.ts")).toEqual(["test/Driver.test.ts"])
  })

  it("own: only the tests named after a reached module or importing one by path", () => {
    expect(testFilesFor(root, "src/Schedule.ts", "own")).toEqual(["test/Schedule.test.ts"])
    expect(testFilesFor(root, "src/internal/zone.ts", "own")).toEqual([
      "test/CronDialect.test.ts",
      "test/Schedule.test.ts",
    ])
  })
})
