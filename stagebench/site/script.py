"""The site's script: it draws each page's plots in the browser from the page's JSON, so a
series page can switch its x-axis (time, commit, engine version) and filter its points by
setting without a server. plotly.js, loaded beside the pages, does the drawing."""

SCRIPT = r"""
const DATA = JSON.parse(document.getElementById('site-data').textContent);
const CONFIG = {displaylogo: false, responsive: true};
const LOOK = {height: 380, template: 'plotly_white', margin: {l: 70, r: 20, t: 40, b: 90},
              legend: {orientation: 'h', y: -0.3}};
const STYLES = [['trusted, steady, no warning', false,
                 {color: '#1f77b4', symbol: 'circle', size: 8}],
                ['untrusted, warned or not steady', true,
                 {color: '#d62728', symbol: 'x-open', size: 11, line: {width: 2}}]];

function xOf(p, axis) {
  return axis === 'time' ? p.time : axis === 'commit' ? p.commit : p.version;
}

function chosen() {
  const out = {};
  document.querySelectorAll('select.filter').forEach(s => {
    if (s.value) out[s.dataset.key] = s.value;
  });
  return out;
}

function kept(p, filters) {
  return Object.entries(filters).every(([k, v]) => (p.settings[k] ?? '-') === v);
}

function errors(points, stat, color) {
  return {type: 'data', symmetric: false, array: points.map(p => p[stat + '_plus']),
          arrayminus: points.map(p => p[stat + '_minus']), color: color, thickness: 1, width: 3};
}

function seriesTraces(points, stat, axis) {
  const have = points.filter(p => p[stat] !== null);
  const traces = [{x: have.map(p => xOf(p, axis)), y: have.map(p => p[stat]), mode: 'lines',
                   line: {color: '#ccc'}, hoverinfo: 'skip', showlegend: false}];
  for (const [name, flagged, marker] of STYLES) {
    const sub = have.filter(p => (p.flags.length > 0) === flagged);
    traces.push({x: sub.map(p => xOf(p, axis)), y: sub.map(p => p[stat]), mode: 'markers', name,
      marker, error_y: errors(sub, stat, marker.color), customdata: sub.map(p => p.index),
      text: sub.map(p => [p.id, p.time, 'commit ' + p.commit + ', version ' + p.version,
                          stat + ' ' + p[stat + '_text'] + ' ms', 'steady: ' + p.steady,
                          'pace ' + (p.pace_ms ?? '-') + ' ms', p.flags.join(', ')].join('<br>')),
      hovertemplate: '%{text}<extra></extra>'});
  }
  return traces;
}

function stepMarks(points, stat, axis) {
  const shown = new Set(points.map(p => p.index));
  const steps = DATA.steps[stat].filter(s => shown.has(s.index));
  const at = s => xOf(DATA.points[s.index], axis);
  return {
    shapes: steps.map(s => ({type: 'line', xref: 'x', yref: 'paper', x0: at(s), x1: at(s), y0: 0,
                             y1: 1, line: {color: '#ff7f0e', dash: 'dash', width: 2}})),
    annotations: steps.map(s => ({x: at(s), y: 1, xref: 'x', yref: 'paper', xanchor: 'left',
      showarrow: false, text: 'step ' + s.label + (s.provisional ? ' (provisional)' : ''),
      font: {color: '#ff7f0e'}})),
  };
}

function show(p) {
  const box = document.getElementById('point');
  const link = p.link ? '<a href="' + encodeURI(p.link) + '">report.html</a>' : 'no report.html';
  box.innerHTML = '<h3></h3><p>' + link + '</p><pre></pre>';
  box.querySelector('h3').textContent = p.id + ' (' + p.time + ')';
  box.querySelector('pre').textContent = p.checkout + '\n' + p.command;
}

function drawSeries() {
  const axis = document.getElementById('axis').value, filters = chosen();
  const points = DATA.points.filter(p => kept(p, filters));
  document.getElementById('shown').textContent =
    points.length + ' of ' + DATA.points.length + ' points';
  for (const stat of ['p50', 'p99']) {
    const marks = stepMarks(points, stat, axis);
    Plotly.react(stat, seriesTraces(points, stat, axis), Object.assign({}, LOOK, marks, {
      title: {text: stat + ' over ' + (axis === 'version' ? 'engine version' : axis)},
      xaxis: {type: axis === 'time' ? 'date' : 'category', automargin: true},
      yaxis: {title: {text: stat + ' ms (log)'}, type: 'log'}}), CONFIG);
  }
}

function drawRows(div, rows, title, yTitle) {
  const traces = Object.entries(rows).map(([name, r]) => ({x: r.x, y: r.y, name,
    mode: 'lines+markers',
    error_y: {type: 'data', symmetric: false, array: r.plus, arrayminus: r.minus, thickness: 1},
    text: r.text, hovertemplate: name + '<br>%{y} (%{text})<extra></extra>'}));
  Plotly.react(div, traces, Object.assign({}, LOOK, {title: {text: title}, height: 460,
    xaxis: {type: 'date'}, yaxis: {title: {text: yTitle}, type: 'log'}}), CONFIG);
}

document.addEventListener('DOMContentLoaded', () => {
  if (!window.Plotly) return;
  if (DATA.points) {
    drawSeries();
    document.querySelectorAll('select').forEach(s => s.addEventListener('change', drawSeries));
    for (const stat of ['p50', 'p99']) {
      document.getElementById(stat).on('plotly_click', e => {
        const index = e.points[0].customdata;
        if (index !== undefined) show(DATA.points[index]);
      });
    }
  } else {
    drawRows('rows', DATA.rows, DATA.title, DATA.y_title);
  }
});
"""
