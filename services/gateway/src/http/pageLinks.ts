/** The `next` and `previous` links of a paged list. */
interface PageLinks {
  next: string | null;
  previous: string | null;
}

/**
 * Links to the pages beside `page` as absolute paths (`path?query`): the request's query as sent,
 * with `page` replaced. `next` is null from the last page on; `previous` is null on page 1 and points
 * at the last page from beyond it, so a client that overshot can walk back to results.
 */
export function pageLinks(path: string, requestUrl: string, page: number, totalPages: number): PageLinks {
  const query = requestUrl.includes('?') ? requestUrl.slice(requestUrl.indexOf('?') + 1) : '';
  const link = (target: number): string => {
    const params = new URLSearchParams(query);
    params.set('page', String(target));
    return `${path}?${params.toString()}`;
  };
  return {
    next: page < totalPages ? link(page + 1) : null,
    previous: page > 1 ? link(Math.min(page - 1, Math.max(totalPages, 1))) : null,
  };
}
