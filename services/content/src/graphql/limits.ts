// How much one operation may ask for: its cost, checked by a validation rule that refuses the document before
// anything runs. Each field costs 1; a list field costs 1 plus its selection's cost times the items it may return —
// its `limit` as written, the default when there is none, the largest limit when the limit is a variable. So the
// cost is the document's alone (mercurius caches validation by the document's text). Introspection (`__schema`,
// `__type`) is free: it is bounded by the schema.
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

function selectionCost(
  context: ValidationContext,
  selectionSet: SelectionSetNode,
  parent: GraphQLCompositeType,
  inFragments: ReadonlySet<string>,
): number {
  let cost = 0
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
          ? selectionCost(context, selection.selectionSet, named, inFragments)
          : 0
      cost += isListType(getNullableType(field.type)) ? 1 + itemsOf(selection) * child : 1 + child
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const condition = selection.typeCondition
        ? context.getSchema().getType(selection.typeCondition.name.value)
        : parent
      if (isCompositeType(condition)) {
        cost += selectionCost(context, selection.selectionSet, condition, inFragments)
      }
    } else {
      const name = selection.name.value
      const fragment: FragmentDefinitionNode | null | undefined = context.getFragment(name)
      // a fragment within itself is the NoFragmentCycles rule's to report
      if (!fragment || inFragments.has(name)) continue
      const condition = context.getSchema().getType(fragment.typeCondition.name.value)
      if (isCompositeType(condition)) {
        cost += selectionCost(context, fragment.selectionSet, condition, new Set([...inFragments, name]))
      }
    }
  }
  return cost
}

/** The rule refusing an operation that costs more than `maximumCost` (its cost in the message). */
export function costLimitRule(maximumCost: number): ValidationRule {
  return (context) => ({
    OperationDefinition(operation) {
      const root = context.getSchema().getRootType(operation.operation)
      if (!root) return
      const cost = selectionCost(context, operation.selectionSet, root, new Set())
      if (cost > maximumCost) {
        context.reportError(
          new GraphQLError(`The operation costs ${cost}, more than the limit of ${maximumCost}`, {
            nodes: [operation],
          }),
        )
      }
    },
  })
}
