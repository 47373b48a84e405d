-- The transcript: streamed text, folded tool calls, the outcome; and progress.
local H = dofile(vim.env.HARNESS)
H.setup()
vim.cmd.edit(vim.env.WORKSPACE .. '/notes.txt')
local buf = vim.api.nvim_get_current_buf()
vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'unsaved line 1', 'unsaved line 2' })

-- the transcript's last line after each text-delta: the text grows as it arrives
local transcript = require('tether.transcript')
local on_event = transcript.on_event
H.result.streamed = {}
transcript.on_event = function(run, event)
  on_event(run, event)
  if event.kind == 'text-delta' then
    local lines = transcript.lines()
    table.insert(H.result.streamed, lines[#lines])
  end
end

H.result.status_seen = {}
vim.api.nvim_create_autocmd('LspProgress', {
  callback = function()
    table.insert(H.result.status_seen, vim.lsp.status())
  end,
})

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.result.modified = vim.bo[buf].modified
  H.result.disk = vim.fn.readfile(vim.env.WORKSPACE .. '/notes.txt')
  -- the folds of the window that showed the run live, before :TetherLog redoes them
  local live = vim.fn.win_findbuf(transcript.buffer())[1]
  H.result.live_folds = live
    and vim.api.nvim_win_call(live, function()
      local folds = {}
      for lnum = 1, vim.api.nvim_buf_line_count(0) do
        table.insert(folds, { vim.fn.foldlevel(lnum), vim.fn.foldclosed(lnum) })
      end
      return folds
    end)
  vim.cmd('TetherLog')
  local win = vim.api.nvim_get_current_win()
  H.result.log_buffer = vim.api.nvim_buf_get_name(0)
  H.result.log_wins = #vim.fn.win_findbuf(transcript.buffer())
  H.result.transcript = H.lines(0)
  H.result.folds = {}
  for lnum = 1, vim.api.nvim_buf_line_count(0) do
    table.insert(H.result.folds, { vim.fn.foldlevel(lnum), vim.fn.foldclosed(lnum) })
  end
  H.result.foldtext = vim.fn.foldtextresult(4)
  H.result.foldmethod = vim.wo[win].foldmethod
  H.finish('done')
end)
vim.cmd('Tether what do my notes say?')
