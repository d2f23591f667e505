// JSON schemas shared by routes: validation, response serialization and the OpenAPI document
// all come from these.

export const errorSchema = {
  $id: 'Error',
  type: 'object',
  description: 'Every error response: a catalogued code (docs/errors.md), a message and optional details.',
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        details: { type: 'object', additionalProperties: true },
      },
    },
  },
} as const;

const errorRef = { $ref: 'Error#' } as const;

/** Error responses any route can give: bad input, a request not arrived in time, a body too large or not JSON, server trouble. */
export const anyRouteErrors = {
  400: errorRef,
  408: errorRef,
  413: errorRef,
  415: errorRef,
  503: errorRef,
  500: errorRef,
} as const;

/** Error responses every authenticated route can give. */
export const authedErrors = {
  ...anyRouteErrors,
  401: errorRef,
  429: errorRef,
} as const;

export const isoDate = { type: 'string', format: 'date-time' } as const;
export const nullableIsoDate = { type: ['string', 'null'], format: 'date-time' } as const;

export const bearer = [{ bearer: [] }];
export { errorRef };
