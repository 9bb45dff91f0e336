#!/usr/bin/env node
// The `tickwork` executable: runs the built CLI (dist/src/bin.js, from src/bin.ts). It is a file
// of its own, present before any build, so that a workspace install can link the bin on a fresh
// clone (pnpm warns when a bin's target does not exist yet).
import "../dist/src/bin.js"
