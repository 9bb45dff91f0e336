// Vitest 4 no longer reads a workspace file by itself, so the root "test" script passes this
// file explicitly: `vitest run --config vitest.workspace.ts`. It is the only test config.
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"

const sourceConditions = ["@tickwork/source", ...defaultServerConditions]
const repoRoot = fileURLToPath(new URL(".", import.meta.url))

// Every folder under packages/ and examples/ with a package.json is one project, named after it;
// an example named like a package (examples/durable beside packages/durable) is "example-<name>".
const folders = (group: string) =>
  readdirSync(join(repoRoot, group), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(repoRoot, group, d.name, "package.json")))
    .map((d) => d.name)
const packageNames = new Set(folders("packages"))
const projectDirs = ["packages", "examples"].flatMap((group) =>
  folders(group).map((name) => ({
    name: group === "examples" && packageNames.has(name) ? `example-${name}` : name,
    root: join(repoRoot, group, name),
  })),
)

export default defineConfig({
  // Workspace packages resolve to their TypeScript sources through the "@tickwork/source" export
  // condition, so nothing here needs a build. Two environments load our code: tests run in Vite's
  // SSR environment (`ssr.resolve`), and global setup files in Vitest's own `__vitest__`
  // environment. Without the condition there, a global setup that imports a workspace package
  // resolves to its dist/, which a fresh clone does not have.
  ssr: { resolve: { conditions: sourceConditions } },
  environments: { __vitest__: { resolve: { conditions: sourceConditions } } },
  test: {
    // Vitest's 5 s default fails property tests on a busy shared two-core machine (and under a
    // mutation run's instrumentation, where a failing dry run stops `pnpm mutate`): a test that
    // waits for something bounds its own wait, so this only has to catch a hang.
    testTimeout: 30_000,
    projects: projectDirs.map(({ name, root }) => ({
      extends: true,
      test: {
        name,
        root,
        // Vitest 4's default exclude no longer skips dist/: look at sources only.
        include: ["test/**/*.test.ts"],
        // A project that needs a service for its run (e.g. a database) starts it here.
        ...(existsSync(join(root, "test/setup/global.ts"))
          ? { globalSetup: [join(root, "test/setup/global.ts")] }
          : {}),
      },
    })),
  },
})
