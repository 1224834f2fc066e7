// The Node clients of the client matrix, unmodified, against a real bench: `node clients.mjs BASE_URL`.
// Prints one JSON object, { scenario: result | { error } }; tests/e2e/test_clients_node.py asserts it.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { createOpenAI } from "@ai-sdk/openai";
import { generateObject, generateText, jsonSchema, Output, streamText, tool } from "ai";
import { z } from "zod";

const baseURL = process.argv[2];
const apiKey = "not-needed-on-loopback";
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
// Anthropic's SDK takes the server's root (it adds /v1/messages), as Claude Code's ANTHROPIC_BASE_URL.
const anthropic = new Anthropic({ baseURL: baseURL.replace(/\/v1$/, ""), apiKey, maxRetries: 0 });
const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const png =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const provider = createOpenAI({ baseURL, apiKey });
const City = z.object({ city: z.string(), population: z.number().int() });
const citySchema = {
  type: "object",
  properties: { city: { type: "string" }, population: { type: "integer" } },
  required: ["city", "population"],
  additionalProperties: false,
};

const scenarios = {
  // openai-node
  async "openai.chat"() {
    const reply = await client.chat.completions.create({
      model: "bench/chatty:pick",
      messages: [{ role: "user", content: "Weather in Paris?" }],
    });
    return { content: reply.choices[0].message.content, picked: reply.bench.picked.alias };
  },
  async "openai.models.retrieve"() {
    const model = await client.models.retrieve("bench/json");
    return { id: model.id, reply: model.reply };
  },
  async "openai.json_schema"() {
    const reply = await client.chat.completions.create({
      model: "bench/json",
      messages: [{ role: "user", content: "Which city?" }],
      response_format: { type: "json_schema", json_schema: { name: "city", schema: citySchema, strict: true } },
    });
    return JSON.parse(reply.choices[0].message.content);
  },
  async "openai.tools"() {
    const reply = await client.chat.completions.create({
      model: "bench/tools",
      messages: [{ role: "user", content: "Weather in Paris?" }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
    });
    const choice = reply.choices[0];
    return { finish: choice.finish_reason, name: choice.message.tool_calls[0].function.name };
  },
  async "openai.chat.stream"() {
    const stream = await client.chat.completions.create({
      model: "bench/chatty:pick",
      messages: [{ role: "user", content: "Weather?" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    return { text };
  },
  async "openai.responses"() {
    const response = await client.responses.create({ model: "bench/chatty:pick", input: "Weather?" });
    return { text: response.output_text, status: response.status };
  },
  async "openai.responses.stream"() {
    const stream = await client.responses.create({ model: "bench/chatty:pick", input: "Weather?", stream: true });
    const types = [];
    let text = "";
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    return { text, first: types[0], last: types[types.length - 1] };
  },
  // @anthropic-ai/sdk
  async "anthropic.message"() {
    const message = await anthropic.messages.create({
      model: "bench/chatty",
      max_tokens: 64,
      system: "Be brief.",
      messages: [{ role: "user", content: "Weather in Paris?" }],
    });
    return { text: message.content[0].text, stop: message.stop_reason, reply: message.bench.reply };
  },
  async "anthropic.stream"() {
    const stream = anthropic.messages.stream({
      model: "bench/chatty",
      max_tokens: 64,
      messages: [{ role: "user", content: "Weather?" }],
    });
    const types = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalMessage();
    return { types, text: final.content[0].text, stop: final.stop_reason };
  },
  async "anthropic.tools"() {
    const first = await anthropic.messages.create({
      model: "bench/tools",
      max_tokens: 64,
      tools: [weather],
      messages: [{ role: "user", content: "Weather in Paris?" }],
    });
    const call = first.content.find((block) => block.type === "tool_use");
    const follow = await anthropic.messages.create({
      model: "bench/chatty",
      max_tokens: 64,
      tools: [weather],
      messages: [
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "sunny" }] },
      ],
    });
    return { stop: first.stop_reason, name: call.name, input: call.input, answer: follow.content[0].text };
  },
  async "anthropic.image"() {
    const message = await anthropic.messages.create({
      model: "bench/chatty",
      max_tokens: 64,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
          ],
        },
      ],
    });
    return { text: message.content[0].text, shape: message.bench.shape };
  },
  async "anthropic.countTokens"() {
    const counted = await anthropic.messages.countTokens({
      model: "bench/chatty",
      messages: [{ role: "user", content: "How many tokens is this?" }],
    });
    return { positive: counted.input_tokens > 0 };
  },
  async "anthropic.error"() {
    try {
      await anthropic.messages.create({
        model: "bench/nope",
        max_tokens: 8,
        messages: [{ role: "user", content: "Hi" }],
      });
      return { thrown: false };
    } catch (error) {
      return {
        notFound: error instanceof Anthropic.NotFoundError,
        status: error.status,
        type: error.error?.error?.type,
      };
    }
  },
  // the Vercel AI SDK
  async "ai.generateText.chat"() {
    const { text, finishReason } = await generateText({ model: provider.chat("bench/chatty:pick"), prompt: "Weather?" });
    return { text, finishReason };
  },
  async "ai.generateText.responses"() {
    // The provider's default model (`provider(id)`) speaks the Responses API.
    const { text } = await generateText({ model: provider("bench/chatty:pick"), prompt: "Weather?" });
    return { text };
  },
  async "ai.streamText"() {
    const result = streamText({ model: provider.chat("bench/chatty:pick"), prompt: "Weather?" });
    let text = "";
    for await (const piece of result.textStream) text += piece;
    return { text };
  },
  async "ai.streamText.responses"() {
    const result = streamText({ model: provider("bench/chatty:pick"), prompt: "Weather?" });
    let text = "";
    for await (const piece of result.textStream) text += piece;
    return { text };
  },
  async "ai.generateObject"() {
    const { object } = await generateObject({ model: provider.chat("bench/json"), schema: City, prompt: "Which city?" });
    return object;
  },
  async "ai.generateObject.responses"() {
    const { object } = await generateObject({ model: provider("bench/json"), schema: City, prompt: "Which city?" });
    return object;
  },
  async "ai.output.object"() {
    // generateObject's successor: generateText with an object output.
    const { output } = await generateText({
      model: provider.chat("bench/json"),
      output: Output.object({ schema: City }),
      prompt: "Which city?",
    });
    return output;
  },
  async "ai.tools"() {
    const { toolCalls } = await generateText({
      model: provider.chat("bench/tools"),
      prompt: "Weather in Paris?",
      tools: { get_weather: tool({ description: "The weather", inputSchema: jsonSchema(citySchema) }) },
    });
    return toolCalls.map((call) => ({ name: call.toolName, input: call.input }));
  },
};

const results = {};
for (const [name, run] of Object.entries(scenarios)) {
  try {
    results[name] = await run();
  } catch (error) {
    results[name] = { error: String(error?.message ?? error).slice(0, 500) };
  }
}
process.stdout.write(JSON.stringify(results));
