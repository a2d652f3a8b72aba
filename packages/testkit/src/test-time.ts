// The tests' one time setting (MERIDIAN_TEST_TIME_SCALE), as infra defines it: a subpath of its own so that a
// vitest.config.ts reads these few lines, not the whole testkit.
export {
  scaledMs,
  type TestTimeoutOptions,
  testCacheDir,
  testModuleCachePath,
  testTimeouts,
  testTimeScale,
  timeScaleVariable,
  waitMs,
} from '@meridian/infra/test-time'
