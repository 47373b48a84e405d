-- The one renderer (render.lua): the events of a run (EVENTS, one of every kind) through
-- it in each view's style, and through the transcript and the chat themselves; no server.
-- Env: EVENTS (the run's `agent/event`s, JSON), RESULT (its `agent/run` result, JSON).
local H = dofile(vim.env.HARNESS)
local render = require('tether.render')
local events = vim.json.decode(vim.env.EVENTS)
local result = vim.json.decode(vim.env.RESULT)

-- Each event's pieces in each style; a run's state carries from one event to the next.
local states = { transcript = {}, chat = {} }
H.result.pieces = {}
for _, event in ipairs(events) do
  local shown = { kind = event.kind }
  for name, style in pairs(render.styles) do
    shown[name] = render.event(event, states[name], style)
  end
  table.insert(H.result.pieces, shown)
end
H.result.finish_pieces = {
  transcript = render.finish({ result = result }, states.transcript, render.styles.transcript),
  chat = render.finish({ result = result }, states.chat, render.styles.chat),
  failed = render.finish({ error = 'the server exited' }, {}, render.styles.transcript),
}

-- The same run in the transcript and in a chat, as they show it.
local chat = require('tether.chat').open()
require('tether.transcript').open()
local run = { id = events[1].runId, prompt = events[1].prompt, events = {}, tx = {}, chat = chat }
for _, event in ipairs(events) do
  require('tether.transcript').on_event(run, event)
  require('tether.chat').on_event(run, event)
end
run.result, run.done = result, true
require('tether.transcript').finish(run)
require('tether.chat').finish(run)
H.result.transcript = require('tether.transcript').lines()
H.result.chat = H.lines(chat.buf)

-- The fold of each view's thinking block, as its window shows it.
local function thinking_fold(buf)
  return vim.api.nvim_win_call(vim.fn.bufwinid(buf), function()
    for lnum = 1, vim.api.nvim_buf_line_count(buf) do
      if vim.startswith(vim.fn.getline(lnum), '▸ thinking') then
        return {
          line = lnum,
          closed = vim.fn.foldclosed(lnum),
          closed_end = vim.fn.foldclosedend(lnum),
          text = vim.fn.foldtextresult(lnum),
        }
      end
    end
    return vim.NIL
  end)
end
H.result.thinking_folds = {
  transcript = thinking_fold(require('tether.transcript').buffer()),
  chat = thinking_fold(chat.buf),
}
H.finish('done')
