// The bookkeeping of exactly-once recovery, without a server: which entries handed to an instance's sockets while a
// session is recovered its socket is given when it connects, which later ones it is left out of, and that nothing is
// kept once no recovery is under way. (recovery-races.test.ts drives the same through live instances.)
import { describe, expect, it } from 'vitest'
import { RecoveriesUnderWay } from '../src/channels/exactly-once-recovery.ts'

const room = 'notifications:ada'

/** A socket of the restored session `sid`, recording what is written to it alone. */
function socketOf(sid: string) {
  const written: unknown[][] = []
  return {
    id: sid,
    recovered: true,
    written,
    packet(packet: { type: number; data: unknown[] }) {
      written.push(packet.data)
    },
  }
}

/** A broadcast to `to` (except `except`), as the cluster adapter hands it over; its options, to read `except` back. */
function handOver(
  recoveries: RecoveriesUnderWay,
  id: string,
  title: string,
  to: string[],
  except: string[] = [],
) {
  const opts = { rooms: new Set(to), except: new Set(except) }
  recoveries.handedOver(['notification:new', { title }], opts, id)
  return opts
}

const session = (sid: string, missed: string[][]) => ({
  sid,
  rooms: [sid, room],
  missedPackets: missed.map(([title, id]) => ['notification:new', { title }, id]),
})

describe('entries handed over while a session is recovered', () => {
  it('when entries are handed over between the restore and the connection, then the socket is given those its rooms take, after its offset and not sent by the restore, in the stream order, with their ids', () => {
    const recoveries = new RecoveriesUnderWay()
    const recovery = recoveries.begin('5-0')
    handOver(recoveries, '4-0', 'the client had it', [room])
    handOver(recoveries, '6-0', 'the restore sent it', [room])
    recoveries.restored(recovery, session('sid-1', [['the restore sent it', '6-0']]))
    handOver(recoveries, '7-0', "another user's", ['notifications:bob'])
    handOver(recoveries, '8-0', 'all but this room', [room, 'notifications:bob'], [room])
    // this instance's own append and another's, handed over by different ways: not in the stream's order
    handOver(recoveries, '10-0', 'second', [room])
    handOver(recoveries, '9-3', 'first', [room])
    handOver(recoveries, '9-12', 'to everyone', [])
    handOver(recoveries, '11-0', 'to the socket itself', ['sid-1'])
    const socket = socketOf('sid-1')

    recoveries.connected(socket)

    expect(socket.written).toEqual([
      ['notification:new', { title: 'first' }, '9-3'],
      ['notification:new', { title: 'to everyone' }, '9-12'],
      ['notification:new', { title: 'second' }, '10-0'],
      ['notification:new', { title: 'to the socket itself' }, '11-0'],
    ])
  })

  it('when an entry is handed over after the connection, then the socket is given nothing more (the broadcast reaches it)', () => {
    const recoveries = new RecoveriesUnderWay()
    const recovery = recoveries.begin('5-0')
    recoveries.restored(recovery, session('sid-1', []))
    const socket = socketOf('sid-1')
    recoveries.connected(socket)

    const opts = handOver(recoveries, '6-0', 'live', [room])

    expect(socket.written).toEqual([])
    expect([...opts.except]).toEqual([])
  })
})

describe('entries the restore sent', () => {
  it('when the reader hands over, after the connection, an entry the restore sent, then the socket is left out of that broadcast', () => {
    const recoveries = new RecoveriesUnderWay()
    recoveries.readerReached('5-0')
    const recovery = recoveries.begin('5-0')
    recoveries.restored(recovery, session('sid-1', [['read by the restore', '6-0']]))
    recoveries.connected(socketOf('sid-1'))

    const late = handOver(recoveries, '6-0', 'read by the restore', [room], ['someone'])

    expect([...late.except]).toEqual(['someone', 'sid-1'])
    // handed over once: a later entry reaches the socket
    expect([...handOver(recoveries, '7-0', 'next', [room]).except]).toEqual([])
  })

  it('when the reader had passed an entry the restore sent, or passes it without handing it over (an entry of this instance), then no broadcast leaves the socket out', () => {
    const recoveries = new RecoveriesUnderWay()
    recoveries.readerReached('6-0')
    const recovery = recoveries.begin('5-0')
    recoveries.restored(
      recovery,
      session('sid-1', [
        ['passed', '6-0'],
        ['own', '7-0'],
      ]),
    )
    recoveries.connected(socketOf('sid-1'))
    recoveries.readerReached('7-0')

    expect([...handOver(recoveries, '6-0', 'passed', [room]).except]).toEqual([])
    expect([...handOver(recoveries, '7-0', 'own', [room]).except]).toEqual([])
  })
})

describe('what is kept', () => {
  it('when no recovery is under way, then nothing handed over is kept', () => {
    const recoveries = new RecoveriesUnderWay()
    handOver(recoveries, '1-0', 'nobody recovers', [room])
    expect(recoveries.keptEntries).toBe(0)
  })

  it('when a restore finds no session, or its socket goes before it connects, or it connects, then nothing it needed is kept', () => {
    const recoveries = new RecoveriesUnderWay()
    const notFound = recoveries.begin('1-0')
    const refused = recoveries.begin('1-0')
    const connecting = recoveries.begin('1-0')
    handOver(recoveries, '2-0', 'meanwhile', [room])
    expect(recoveries.keptEntries).toBe(1)

    recoveries.end(notFound)
    recoveries.restored(refused, session('sid-refused', []))
    recoveries.gone('sid-refused')
    expect(recoveries.keptEntries).toBe(1)
    recoveries.restored(connecting, session('sid-2', []))
    handOver(recoveries, '3-0', 'still meanwhile', [room])
    recoveries.connected(socketOf('sid-2'))

    expect(recoveries.keptEntries).toBe(0)
  })

  it('when an older recovery ends while a newer one is under way, then only what the newer one may need is kept', () => {
    const recoveries = new RecoveriesUnderWay()
    const older = recoveries.begin('1-0')
    handOver(recoveries, '2-0', 'before the newer began', [room])
    const newer = recoveries.begin('1-0')
    handOver(recoveries, '3-0', 'after', [room])

    recoveries.end(older)

    expect(recoveries.keptEntries).toBe(1)
    recoveries.restored(newer, session('sid-3', []))
    const socket = socketOf('sid-3')
    recoveries.connected(socket)
    expect(socket.written).toEqual([['notification:new', { title: 'after' }, '3-0']])
  })
})
