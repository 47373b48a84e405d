;;; render-story.el --- The one renderer (tether-render.el) in `emacs --batch'  -*- lexical-binding: t; -*-

;; Environment: TETHER_EL_DIR (editors/emacs), TETHER_EVENTS (a file: a run's
;; `agent/event's, one of every kind, as JSON), TETHER_RUN_RESULT (its `agent/run'
;; result, JSON), TETHER_RESULT (where the JSON report goes).  No server: the events go
;; through the renderer as the transcript and the chat make it, then through the
;; transcript and the chat themselves.  Faces are written {FACE:text}.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(require 'tether-chat)

(defun render-story-parse (text)
  "TEXT (JSON) as jsonrpc.el parses a message."
  (json-parse-string text :object-type 'plist :null-object nil :false-object :json-false))

(defun render-story-markup (string)
  "STRING with each run of one `font-lock-face' written {FACE:text}."
  (let ((pos 0) (out ""))
    (while (< pos (length string))
      (let ((next (or (next-single-property-change pos 'font-lock-face string) (length string)))
            (face (get-text-property pos 'font-lock-face string)))
        (setq out (concat out (if face
                                  (format "{%s:%s}" face (substring-no-properties string pos next))
                                (substring-no-properties string pos next)))
              pos next)))
    out))

(defun render-story-items (items)
  "The renderer's ITEMS as JSON: a line as its markup, streamed text as [\"text\", TEXT],
thinking as [\"thinking\", \"new\" or \"more\", SUMMARY, TEXT]."
  (vconcat (mapcar (lambda (item)
                     (cond ((stringp item) (render-story-markup item))
                           ((eq (car item) 'thinking)
                            (pcase-let ((`(thinking ,new ,summary ,text) item))
                              (vector "thinking" (if new "new" "more") summary text)))
                           (t (vector "text" (cdr item)))))
                   items)))

(defun render-story-visible (buffer)
  "BUFFER's text as the screen shows it: without what is invisible."
  (with-current-buffer buffer
    (let ((pos (point-min)) (out ""))
      (while (< pos (point-max))
        (let ((next (next-single-char-property-change pos 'invisible)))
          (unless (invisible-p pos)
            (setq out (concat out (buffer-substring-no-properties pos next))))
          (setq pos next)))
      out)))

(defun render-story-toggle (buffer)
  "Push the first thinking summary's button in BUFFER, as RET on it does."
  (with-current-buffer buffer
    (let ((at (text-property-not-all (point-min) (point-max) 'tether-thinking nil)))
      (push-button at))))

(defun render-story-text (buffer)
  "BUFFER's text, faces marked."
  (with-current-buffer buffer (render-story-markup (buffer-string))))

(let* ((events (append (render-story-parse (with-temp-buffer
                                             (insert-file-contents (getenv "TETHER_EVENTS"))
                                             (buffer-string)))
                       nil))
       (result (render-story-parse (getenv "TETHER_RUN_RESULT")))
       (transcript tether--transcript)  ; no state: it shows no streamed text
       (chat-render (tether-chat--renderer))
       (pieces (mapcar (lambda (event)
                         (vector (plist-get event :kind)
                                 (render-story-items (tether-render-event transcript event))
                                 (render-story-items (tether-render-event chat-render event))))
                       events)))
  (dolist (event events) (tether--event nil event))
  (with-current-buffer (tether-chat--buffer)
    (setq tether-chat--render (tether-chat--renderer))
    (dolist (event events) (tether-chat--event event))
    (tether-chat--finished result))
  (let ((shown `((transcriptShown . ,(render-story-visible "*tether*"))
                 (chatShown . ,(render-story-visible "*tether-chat*")))))
    (when (text-property-not-all 1 (with-current-buffer "*tether*" (point-max))
                                 'tether-thinking nil (get-buffer "*tether*"))
      (render-story-toggle "*tether*")
      (render-story-toggle "*tether-chat*")
      (push `(transcriptOpened . ,(render-story-visible "*tether*")) shown)
      (push `(chatOpened . ,(render-story-visible "*tether-chat*")) shown)
      (render-story-toggle "*tether-chat*")
      (push `(chatClosed . ,(render-story-visible "*tether-chat*")) shown))
    (with-temp-file (getenv "TETHER_RESULT")
      (insert (json-encode `((pieces . ,(vconcat pieces))
                             (transcript . ,(render-story-text "*tether*"))
                             (chat . ,(render-story-text "*tether-chat*"))
                             ,@shown)))))
  (kill-emacs 0))
