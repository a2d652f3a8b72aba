// infra's own tests build bundles and start processes and clusters of engines: seconds each on an idle machine, far
// more on a loaded one, so they need the tests' generous timeouts rather than vitest's 5 s.

import { defineConfig } from 'vitest/config'
import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { testCacheDir, testModuleCachePath, testTimeouts } from './src/test-time.ts'

/**
 * The clusters' files first: each starts three hosts of engines and runs a minute or more, the rest seconds. Started
 * last (a machine's first run has no timings for vitest to order by), the longest finished a minute and a half after the others.
 */
class ClustersFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const isCluster = (file: TestSpecification) => /\/test\/cluster-[^/]*\.test\.ts$/.test(file.moduleId)
    return [...sorted.filter(isCluster), ...sorted.filter((file) => !isCluster(file))]
  }
}

export default defineConfig({
  cacheDir: testCacheDir(import.meta.dirname),
  test: {
    ...testTimeouts(),
    fsModuleCachePath: testModuleCachePath(),
    sequence: { sequencer: ClustersFirst },
  },
})
