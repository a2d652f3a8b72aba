// @meridian/infra/observability: the trace view's screenshot and where Chromium is (kept out of the main entry point,
// which would otherwise load playwright-core for every engine command).
export { chromiumPath } from './chromium.ts'
export {
  findTraceId,
  screenshotViewport,
  type TraceScreenshot,
  TraceScreenshotError,
  type TraceScreenshotOptions,
  traceScreenshot,
} from './trace-screenshot.ts'
