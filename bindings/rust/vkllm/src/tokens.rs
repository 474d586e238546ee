//! Greedy generation as an iterator, one decode step per token.

use vkllm_sys as sys;

use crate::{is_end_of_generation, Result, Session};

/// Iterator of greedily generated tokens; see [`Session::tokens`].
pub struct Tokens<'s> {
    session: &'s mut Session,
    /// Tokens to feed before the next argmax: the prompt first, then the last token yielded.
    pending: Vec<i32>,
    remaining: u32,
    done: bool,
}

impl Session {
    /// Greedy generation as an iterator of token ids, one decode step per `next()` (through
    /// `vkllm_session_eval` and an argmax on the host). It ends after `max_tokens` tokens or
    /// before an end-of-generation token; an error is yielded once, then the iterator ends.
    /// Like `generate`, it leaves every yielded token but the last in the cache.
    pub fn tokens(&mut self, prompt: &[i32], max_tokens: u32) -> Tokens<'_> {
        Tokens {
            session: self,
            pending: prompt.to_vec(),
            remaining: max_tokens,
            done: false,
        }
    }
}

impl Tokens<'_> {
    fn step(&mut self) -> Result<Option<i32>> {
        let logits = self.session.eval(&self.pending)?;
        let next = argmax(&logits);
        // SAFETY: the session keeps its model (and so the tokenizer) alive.
        let tok = unsafe { sys::vkllm_model_get_tokenizer(self.session.model) };
        if is_end_of_generation(tok, next)? {
            return Ok(None);
        }
        self.pending.clear();
        self.pending.push(next);
        Ok(Some(next))
    }
}

impl Iterator for Tokens<'_> {
    type Item = Result<i32>;

    fn next(&mut self) -> Option<Result<i32>> {
        if self.done || self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        match self.step() {
            Ok(Some(token)) => Some(Ok(token)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Index of the largest value, the first of equals (as a device argmax would pick).
fn argmax(values: &[f32]) -> i32 {
    let mut best = 0usize;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] {
            best = i;
        }
    }
    best as i32
}
