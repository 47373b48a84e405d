-- The renderer's escaping (render.lua's `shown`) of many texts, with line breaks kept and
-- on one line. Env: TEXTS (a file: a JSON list of strings).
local H = dofile(vim.env.HARNESS)
local render = require('tether.render')
local texts = vim.json.decode(table.concat(vim.fn.readfile(vim.env.TEXTS, 'b'), '\n'))
H.result.lines = vim.tbl_map(function(text)
  return render.shown(text)
end, texts)
H.result.one_line = vim.tbl_map(function(text)
  return render.shown(text, true)
end, texts)
H.finish('done')
