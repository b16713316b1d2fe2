// Temporal client connections that can be closed while a call is being retried.
//
// The SDK's gRPC retry interceptor (@temporalio/client/lib/grpc-retry.js) schedules each retry
// with a bare setTimeout whose callback starts a new call on the channel. When the Connection is
// closed meanwhile (a CLI command ending, the API shutting down, a test tearing its server down),
// that callback throws "Channel has been shut down" from the timer: an uncaught exception, which
// crashes the process (and vitest counts as a failure). Here the same retry policy runs with the
// channel's call factory guarded: on a closed channel it returns a call that ends at once with
// CANCELLED, which the policy does not retry, so the caller's promise rejects instead.
import { createRequire } from 'node:module';
import { Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions } from '@temporalio/client';
import type * as GrpcTypes from '@grpc/grpc-js';

// The gRPC library the SDK itself loads (its dependency, not ours): same classes, same version.
const grpc = createRequire(createRequire(import.meta.url).resolve('@temporalio/client'))('@grpc/grpc-js') as typeof GrpcTypes;

type NextCall = Parameters<GrpcTypes.Interceptor>[1];
type Call = ReturnType<NextCall>;

/** A call that never reaches the network: it reports `details` with CANCELLED once started. */
function endedCall(details: string): Call {
  let ended = false;
  return {
    start(_metadata: GrpcTypes.Metadata, listener: { onReceiveStatus?: (status: GrpcTypes.StatusObject) => void }) {
      setImmediate(() => {
        if (ended) return;
        ended = true;
        listener.onReceiveStatus?.({ code: grpc.status.CANCELLED, details, metadata: new grpc.Metadata() });
      });
    },
    cancelWithStatus() {
      ended = true;
    },
    getPeer: () => '',
    sendMessageWithContext() {},
    sendMessage() {},
    startRead() {},
    halfClose() {},
    getAuthContext: () => null,
  } as unknown as Call;
}

/** Wraps an interceptor so that the calls it starts (first attempts and retries alike) on a
 * channel that has been shut down end with CANCELLED instead of throwing. */
export function closeSafe(interceptor: GrpcTypes.Interceptor): GrpcTypes.Interceptor {
  return (options, nextCall) => {
    const guarded: NextCall = (opts) => {
      try {
        return nextCall(opts);
      } catch (err) {
        return endedCall(`the Temporal connection was closed (${(err as Error).message})`);
      }
    };
    return interceptor(options, guarded);
  };
}

/** The SDK's default retry policy, safe to close under. */
export function closeSafeRetryInterceptor(): GrpcTypes.Interceptor {
  return closeSafe(makeGrpcRetryInterceptor(defaultGrpcRetryOptions()));
}

/** `Connection.connect` with the close-safe retry interceptor (unless interceptors are given). */
export function connectTemporal(options: ConnectionOptions): Promise<Connection> {
  return Connection.connect({ interceptors: [closeSafeRetryInterceptor()], ...options });
}
