// A cluster of real engines on this machine's network namespaces (@meridian/infra/cluster): what a run across hosts
// and its fault campaign use.
export { type Cluster, type ClusterOptions, destroyCluster, startCluster } from './cluster.ts'
export type { HostEngine } from './engine.ts'
export { type ClusterHost, createHosts, destroyHosts, type Hosts } from './hosts.ts'
export { clusterReplication } from './kafka-cluster.ts'
export type { LinkFault, Links } from './links.ts'
