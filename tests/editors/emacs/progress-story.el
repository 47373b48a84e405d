;;; progress-story.el --- A running command in the chat and the transcript  -*- lexical-binding: t; -*-

;; Environment as story.el.  The user sends "build it" from the chat; the model runs a
;; command that prints a line, then waits on the FIFO `gate' in the root.  Once both
;; views show its status line saying a second or more, the story opens the FIFO; the
;; report has both views then and once the run ended.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(require 'tether-chat)

(run-with-timer 60 nil (lambda () (kill-emacs 3)))

(setq tether-server-command (list (getenv "TETHER_PYTHON") "-m" "tether" "serve"))
(setq tether-initialization-options
      (list :provider "scripted" :script (getenv "TETHER_SCRIPT_FILE") :autoApprove ["bash"]))

(defun progress-story-text (buffer)
  "BUFFER's text, or \"\" when there is no such buffer."
  (if (get-buffer buffer)
      (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max)))
    ""))

(defun progress-story-seconds (buffer)
  "The seconds the status line in BUFFER says, or nil."
  (let ((text (progress-story-text buffer)))
    (when (string-match " \\([0-9]+\\) s · compiling part one$" text)
      (string-to-number (match-string 1 text)))))

(let ((default-directory (file-name-as-directory (getenv "TETHER_ROOT")))
      running)
  (tether-chat)
  (with-current-buffer "*tether-chat*"
    (goto-char (point-max))
    (insert "build it")
    (tether-chat-send))
  (while (not (and (>= (or (progress-story-seconds "*tether-chat*") 0) 1)
                   (progress-story-seconds "*tether*")))
    (accept-process-output nil 0.05))
  (setq running `((chat . ,(progress-story-text "*tether-chat*"))
                  (transcript . ,(progress-story-text "*tether*"))))
  (call-process "sh" nil nil nil "-c" "echo go > gate")
  (while (not tether-last-result) (accept-process-output nil 0.05))
  (with-temp-file (getenv "TETHER_RESULT")
    (insert (json-encode `((outcome . ,(plist-get tether-last-result :outcome))
                           (running . ,running)
                           (chat . ,(progress-story-text "*tether-chat*"))
                           (transcript . ,(progress-story-text "*tether*"))))))
  (kill-emacs 0))
