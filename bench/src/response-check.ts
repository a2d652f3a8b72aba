// Before measuring: do both servers answer the same requests with the same bodies? A benchmark of unequal work
// would compare nothing.
import { isDeepStrictEqual } from 'node:util'
import { newUserBody } from './load.ts'

export interface ResponseCheck {
  /** list bodies deep-equal (same rows, envelope, links) */
  listIdentical: boolean
  /** create answers: same status, same body fields, location and etag on both */
  createEquivalent: boolean
  problems: string[]
}

interface Answer {
  status: number
  body: unknown
  headers: Headers
}

const ask = async (url: string, init?: RequestInit): Promise<Answer> => {
  const response = await fetch(url, init)
  return { status: response.status, body: await response.json(), headers: response.headers }
}

const fieldsOf = (body: unknown) => Object.keys(body as object).sort()

export async function checkResponses(
  chassisUrl: string,
  bareUrl: string,
  authorization: string,
): Promise<ResponseCheck> {
  const problems: string[] = []
  const list = `/api/v1/users?limit=20`
  const init = { headers: { authorization } }
  const [chassisList, bareList] = await Promise.all([ask(chassisUrl + list, init), ask(bareUrl + list, init)])
  if (chassisList.status !== 200 || bareList.status !== 200) {
    problems.push(`GET ${list}: chassis ${chassisList.status}, bare ${bareList.status}`)
  }
  const listIdentical = isDeepStrictEqual(chassisList.body, bareList.body)
  if (!listIdentical) problems.push(`GET ${list}: the bodies differ`)

  const create = (baseUrl: string) =>
    ask(`${baseUrl}/api/v1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: newUserBody(),
    })
  const [chassisCreate, bareCreate] = [await create(chassisUrl), await create(bareUrl)]
  const createEquivalent =
    chassisCreate.status === 201 &&
    bareCreate.status === 201 &&
    isDeepStrictEqual(fieldsOf(chassisCreate.body), fieldsOf(bareCreate.body)) &&
    [chassisCreate, bareCreate].every(
      (answer) => answer.headers.has('location') && answer.headers.has('etag'),
    )
  if (!createEquivalent) {
    problems.push(
      `POST /api/v1/users: chassis ${chassisCreate.status} ${JSON.stringify(chassisCreate.body)}, bare ${bareCreate.status} ${JSON.stringify(bareCreate.body)}`,
    )
  }
  return { listIdentical, createEquivalent, problems }
}
