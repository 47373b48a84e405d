;;; ask-withdraw-story.el --- The server withdraws a question the user has not answered  -*- lexical-binding: t; -*-

;; Environment as withdraw-story.el (in `emacs -nw': a real minibuffer).  The scripted
;; model calls `ask_user'; its prompt opens and nobody answers.  The run times out
;; (timeoutSeconds 3), the server withdraws the question: the prompt must close by
;; itself and the run end.  The report says what was seen; a prompt that stays open
;; leaves the watchdog to end Emacs with no report.  With TETHER_BUSY, the user is
;; typing in the minibuffer when the question comes (for 3 s, then done with it; the
;; model asks after 1 s, the run times out after 6 s): the question waits for the
;; minibuffer, then opens.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(require 'tether)

(run-with-timer 45 nil (lambda () (message "ask-withdraw-story.el: watchdog fired") (kill-emacs 3)))

(setq tether-server-command
      (list (getenv "TETHER_PYTHON") (getenv "TETHER_PROXY") (getenv "TETHER_PROXY_LOG")
            (getenv "TETHER_PYTHON") "-m" "tether" "serve"))
(setq tether-initialization-options
      (list :provider "scripted" :script (getenv "TETHER_SCRIPT_FILE")
            :timeoutSeconds (if (getenv "TETHER_BUSY") 6 3)))

(defvar ask-withdraw-prompts nil "The minibuffer prompts shown, newest first.")

(add-hook 'minibuffer-setup-hook
          (lambda () (push (minibuffer-prompt) ask-withdraw-prompts)))

(let* ((root (file-name-as-directory (getenv "TETHER_ROOT")))
       (default-directory root)
       (deadline (+ (float-time) 40)))
  (find-file (expand-file-name "src/app.py" root))
  (tether-run "pick for me")
  (when (getenv "TETHER_BUSY")  ; the model asks 1 s after the run starts
    (run-at-time 0 nil (lambda () (ignore-errors (read-string "busy: "))))
    (run-at-time 3 nil (lambda () (when (active-minibuffer-window) (exit-minibuffer)))))
  (while (and (not tether-last-result) (< (float-time) deadline))
    (accept-process-output nil 0.05))
  (with-temp-file (getenv "TETHER_RESULT")
    (insert (json-encode
             `((outcome . ,(plist-get tether-last-result :outcome))
               (prompts . ,(vconcat (reverse ask-withdraw-prompts)))
               (depth . ,(minibuffer-depth))
               (messages . ,(with-current-buffer "*Messages*" (buffer-string))))))))
(kill-emacs 0)
