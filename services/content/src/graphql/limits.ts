// How much one operation may ask for — how deep its selections nest, and what it costs — checked by a validation
// rule that refuses the document before anything runs, over HTTP and for subscriptions alike. Each field costs 1; a
// list field costs 1 plus its selection's cost times the items it may return — its `limit` as written, the default
// when there is none, the largest limit when the limit is a variable. So both are the document's alone (mercurius
// caches validation by the document's text). Introspection (`__schema`, `__type`) is free and counts no depth: it is
// bounded by the schema.
import { graphqlLimits } from '@meridian/contracts'
import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  GraphQLError,
  getNamedType,
  getNullableType,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql'

/** The items a list field may return, read from its `limit` argument as written. */
function itemsOf(node: FieldNode): number {
  const limit = node.arguments?.find((argument) => argument.name.value === 'limit')?.value
  if (limit === undefined) return graphqlLimits.defaultPostsLimit
  if (limit.kind !== Kind.INT) return graphqlLimits.maxPostsLimit
  return Math.min(Math.max(Number(limit.value), 0), graphqlLimits.maxPostsLimit)
}

/** What a selection set asks for: its cost, and its depth (the fields nested in it, itself included). */
interface Demand {
  cost: number
  depth: number
}

function demandOf(
  context: ValidationContext,
  selectionSet: SelectionSetNode,
  parent: GraphQLCompositeType,
  inFragments: ReadonlySet<string>,
): Demand {
  let cost = 0
  let depth = 0
  const add = (inner: Demand) => {
    cost += inner.cost
    depth = Math.max(depth, inner.depth)
  }
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value.startsWith('__')) continue
      const field =
        isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[selection.name.value] : undefined
      // an unknown field is the FieldsOnCorrectType rule's to report
      if (!field) continue
      const named = getNamedType(field.type)
      const child =
        selection.selectionSet && isCompositeType(named)
          ? demandOf(context, selection.selectionSet, named, inFragments)
          : { cost: 0, depth: 0 }
      const items = isListType(getNullableType(field.type)) ? itemsOf(selection) : 1
      add({ cost: 1 + items * child.cost, depth: 1 + child.depth })
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const condition = selection.typeCondition
        ? context.getSchema().getType(selection.typeCondition.name.value)
        : parent
      if (isCompositeType(condition)) add(demandOf(context, selection.selectionSet, condition, inFragments))
    } else {
      const name = selection.name.value
      const fragment: FragmentDefinitionNode | null | undefined = context.getFragment(name)
      // a fragment within itself is the NoFragmentCycles rule's to report
      if (!fragment || inFragments.has(name)) continue
      const condition = context.getSchema().getType(fragment.typeCondition.name.value)
      if (isCompositeType(condition)) {
        add(demandOf(context, fragment.selectionSet, condition, new Set([...inFragments, name])))
      }
    }
  }
  return { cost, depth }
}

export interface OperationLimits {
  /** the deepest nesting of fields */
  maxDepth: number
  /** the largest cost */
  maxCost: number
}

/** The rule refusing an operation deeper than `maxDepth` or costing more than `maxCost` (the figures in the message). */
export function operationLimitsRule({ maxDepth, maxCost }: OperationLimits): ValidationRule {
  return (context) => ({
    OperationDefinition(operation) {
      const root = context.getSchema().getRootType(operation.operation)
      if (!root) return
      const { cost, depth } = demandOf(context, operation.selectionSet, root, new Set())
      if (depth > maxDepth) {
        context.reportError(
          new GraphQLError(`The operation is nested ${depth} deep, deeper than the limit of ${maxDepth}`, {
            nodes: [operation],
          }),
        )
      }
      if (cost > maxCost) {
        context.reportError(
          new GraphQLError(`The operation costs ${cost}, more than the limit of ${maxCost}`, {
            nodes: [operation],
          }),
        )
      }
    },
  })
}
