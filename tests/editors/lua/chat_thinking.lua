-- :TetherChat with a model that thinks before it answers: the thinking grows in a closed
-- fold under its summary line as it streams, the answer comes after it, outside the fold;
-- `zo` on the summary shows the thinking. The transcript shows the same block.
-- Env: OPEN (the file shown beside the chat), SETTINGS (JSON merged into the settings).
local H = dofile(vim.env.HARNESS)
H.setup({ settings = vim.json.decode(vim.env.SETTINGS or '{}') })
vim.cmd.edit(vim.env.WORKSPACE .. '/' .. vim.env.OPEN)
local chat_mod = require('tether.chat')

--- The thinking block of a buffer, as the window showing it shows it.
local function block(buf)
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    return vim.NIL
  end
  return vim.api.nvim_win_call(win, function()
    for lnum = 1, vim.api.nvim_buf_line_count(buf) do
      if vim.startswith(vim.fn.getline(lnum), '▸ thinking (') then
        return {
          line = lnum,
          summary = vim.fn.getline(lnum),
          closed = vim.fn.foldclosed(lnum),
          closed_end = vim.fn.foldclosedend(lnum),
          text = vim.fn.foldtextresult(lnum),
        }
      end
    end
    return vim.NIL
  end)
end

-- the chat's thinking block after each event that adds to it: it grows, closed
H.result.growing = {}
local on_event = chat_mod.on_event
chat_mod.on_event = function(run, event)
  on_event(run, event)
  if event.kind == 'thinking' and run.chat then
    local lines = H.lines(run.chat.buf)
    table.insert(H.result.growing, { block = block(run.chat.buf), last = lines[#lines] })
  end
end

H.input(':TetherChat<CR>')
H.when(function()
  return chat_mod.current() ~= nil and vim.api.nvim_get_current_buf() == chat_mod.current().buf
end, function()
  require('tether.transcript').open() -- the transcript beside it, as :TetherLog shows it
  H.input('iwhat does app.py do?<Esc><CR>')
end)

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.later(function()
    local chat = chat_mod.current()
    H.result.chat = H.lines(chat.buf)
    H.result.closed = block(chat.buf)
    local transcript = require('tether.transcript').buffer()
    H.result.transcript = H.lines(transcript)
    H.result.transcript_block = block(transcript)
    if H.result.closed == vim.NIL then
      return H.finish('done') -- no thinking shown: the test says what is missing
    end
    -- the user opens the fold: `zo` on the summary line
    vim.api.nvim_win_set_cursor(0, { H.result.closed.line, 0 })
    H.input('zo')
    H.when(function()
      return vim.fn.foldclosed(H.result.closed.line) == -1
    end, function()
      H.result.opened = block(chat.buf)
      H.finish('done')
    end)
  end, 30)
end)
