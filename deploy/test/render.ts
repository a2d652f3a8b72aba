// The value sets every test renders the chart with: the defaults, and each documented example.
export const exampleFiles = [
  'examples/scaled-out.yaml',
  'examples/strimzi.yaml',
  'examples/cloudnativepg.yaml',
  'examples/consul-agents.yaml',
  'examples/redis-external.yaml',
] as const

export const valueSets: { name: string; valuesFiles: string[] }[] = [
  { name: 'the default values', valuesFiles: [] },
  ...exampleFiles.map((file) => ({ name: file, valuesFiles: [file] })),
]
