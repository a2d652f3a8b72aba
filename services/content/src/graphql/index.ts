// The GraphQL layer's parts a bare baseline composes with the use cases (bench:graphql): the resolvers, the loaders
// and the postCreated channel, as the service's plugin (plugin.ts) registers them.
export type { ContentContext } from './context.ts'
export { contentLoaders } from './loaders.ts'
export { contentResolvers } from './resolvers.ts'
export { createPostCreatedChannel, type PostCreatedChannel } from './subscriptions.ts'
