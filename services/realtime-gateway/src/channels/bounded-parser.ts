// Socket.IO's packet parser with the kit's bound on nesting (maxJsonDepth, as every HTTP body has): a packet whose JSON
// is nested deeper is refused before it is parsed, and the connection that sent it is closed (Socket.IO's answer to a
// packet it cannot decode). Parsed, such a payload reached code that recurses: the echo's JSON.stringify in the
// adapter overflowed the stack (100,000 nested arrays in 200 KB, under the message size limit).
import { jsonDepthExceeds, maxJsonDepth } from '@meridian/service-kit'
import { Decoder, Encoder, protocol } from 'socket.io-parser'

export class BoundedDecoder extends Decoder {
  override add(chunk: unknown): void {
    // a text packet is its type, namespace and id, then its JSON: no bracket or quote before the JSON
    if (typeof chunk === 'string' && jsonDepthExceeds(chunk, maxJsonDepth)) {
      throw new Error(`packet nested deeper than ${maxJsonDepth} levels`)
    }
    super.add(chunk)
  }
}

/** The server's `parser` option: socket.io-parser with the bounded decoder. */
export const boundedParser = { protocol, Encoder, Decoder: BoundedDecoder }
