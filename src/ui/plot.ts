/** A line chart per series, stacked, as a standalone SVG: the steps on x, each series scaled to its own range. */
export function plotSvg(title: string, steps: number[], series: { name: string; values: (number | null)[] }[]): string {
  const width = 640;
  const panel = 180;
  const pad = { left: 64, right: 16, top: 36, bottom: 28 };
  const height = pad.top + series.length * (panel + pad.bottom);
  const x0 = Math.min(...steps);
  const x1 = Math.max(...steps, x0 + 1);
  const sx = (s: number): number => pad.left + ((s - x0) / (x1 - x0)) * (width - pad.left - pad.right);
  const esc = (t: string): string => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" ` +
      `height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${pad.left}" y="20" font-size="14">${esc(title)}</text>`,
  ];
  series.forEach((s, i) => {
    const top = pad.top + i * (panel + pad.bottom);
    const known = s.values.filter((v): v is number => v !== null && Number.isFinite(v));
    const lo = known.length ? Math.min(...known) : 0;
    const hi = known.length ? Math.max(...known) : 1;
    const span = hi - lo || Math.abs(hi) || 1;
    const sy = (v: number): number => top + panel - ((v - lo) / span) * panel;
    const points = s.values.map((v, k) =>
      v === null || !Number.isFinite(v) ? null : `${sx(steps[k]).toFixed(1)},${sy(v).toFixed(1)}`,
    );
    parts.push(
      `<rect x="${pad.left}" y="${top}" width="${width - pad.left - pad.right}" ` +
        `height="${panel}" fill="none" stroke="#ccc"/>`,
      `<text x="${pad.left + 6}" y="${top + 16}">${esc(s.name)}</text>`,
      `<text x="${pad.left - 6}" y="${top + 4}" text-anchor="end">${fmt(lo + span)}</text>`,
      `<text x="${pad.left - 6}" y="${top + panel}" text-anchor="end">${fmt(lo)}</text>`,
      `<text x="${pad.left}" y="${top + panel + 16}">step ${x0}</text>`,
      `<text x="${width - pad.right}" y="${top + panel + 16}" text-anchor="end">step ${x1}</text>`,
      `<polyline fill="none" stroke="#1f6feb" stroke-width="2" points="${points.filter(Boolean).join(' ')}"/>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function fmt(v: number): string {
  return Math.abs(v) >= 100 || v === 0 ? v.toFixed(0) : v.toPrecision(3);
}
